import { describe, expect, it } from "vitest";
import { cleanToken, resolveDiscordAccounts } from "../../../adapters/discord/index.js";
import { DiscordConfigSchema } from "../../../adapters/discord/discord-config.js";

const parse = (raw: unknown) => DiscordConfigSchema.parse(raw);

describe("resolveDiscordAccounts", () => {
  it("takes the token from config before DISCORD_BOT_TOKEN, and strips a pasted 'Bot ' prefix", () => {
    expect(resolveDiscordAccounts(parse({ token: "Bot abc.def" }), { DISCORD_BOT_TOKEN: "env.tok" })[0]!.token).toBe(
      "abc.def",
    );
    expect(resolveDiscordAccounts(parse({}), { DISCORD_BOT_TOKEN: " Bot env.tok " })[0]!.token).toBe("env.tok");
  });

  it("runs one bot per account; accounts inherit shared settings but not the token", () => {
    const accounts = resolveDiscordAccounts(
      parse({ replyToMode: "all", commandGuilds: ["1"], accounts: { work: { token: "w.tok" } } }),
      {},
    );
    expect(accounts.map((a) => a.accountId)).toEqual(["work"]);
    expect(accounts[0]!.settings).toMatchObject({ replyToMode: "all", token: "w.tok" });
    expect(accounts[0]!.settings.commandGuilds).toEqual(["1"]);
  });

  it("names the config path and the fix when a token is missing", () => {
    expect(() => resolveDiscordAccounts(parse({}), {})).toThrow(
      /channels\.discord has no bot token: set token, or DISCORD_BOT_TOKEN/,
    );
    expect(() => resolveDiscordAccounts(parse({ token: "a", accounts: { work: {} } }), {})).toThrow(
      /channels\.discord\.accounts\.work has no bot token: set token \(/,
    );
  });

  it("skips a disabled account", () => {
    expect(resolveDiscordAccounts(parse({ token: "a", enabled: false }), {})).toEqual([]);
  });

  it("treats a token of only 'Bot ' as missing", () => {
    expect(cleanToken("Bot ")).toBeUndefined();
  });
});
