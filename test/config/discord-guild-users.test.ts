import { describe, expect, it } from "vitest";
import type { DiscordConfig } from "../../adapters/discord/discord-config.js";
import { parseConfig } from "../adapters/table-config.js";
import type { SwitchboardError } from "../../src/errors.js";

describe("channels.discord.guilds: users", () => {
  it("reads a guild's and a channel's users as their allowFrom", () => {
    const { config } = parseConfig({
      channels: { discord: { guilds: { "1": { users: ["42"], channels: { "7": { users: ["43"], allow: true } } } } } },
    });
    const guild = (config.channels.discord as DiscordConfig).guilds!["1"]!;
    expect(guild.allowFrom).toEqual(["42"]);
    expect(guild.channels!["7"]).toEqual({ allow: true, allowFrom: ["43"] });
    expect("users" in guild).toBe(false);
  });

  it("refuses users next to allowFrom, naming the path", () => {
    let details: readonly string[] = [];
    try {
      parseConfig({ channels: { discord: { guilds: { "1": { users: ["42"], allowFrom: ["43"] } } } } });
    } catch (error) {
      details = (error as SwitchboardError).details;
    }
    expect(details).toEqual([expect.stringMatching(/^channels\.discord\.guilds\.1\.users: .*keep one/)]);
  });
});
