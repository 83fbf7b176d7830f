import { describe, expect, it } from "vitest";
import { cleanToken, resolveDiscordAccounts } from "../../../adapters/discord/index.js";
import { DiscordConfigSchema } from "../../../adapters/discord/discord-config.js";
import type { SwitchboardError } from "../../../src/errors.js";
import { parseConfig } from "../table-config.js";

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

  it("skips the top-level account without a token only when accounts names others and not it", () => {
    const ids = (raw: unknown) => resolveDiscordAccounts(parse(raw), {}).map((a) => a.accountId);
    expect(ids({ accounts: { work: { token: "w" } } })).toEqual(["work"]);
    expect(ids({ accounts: { Default: { token: "d" }, work: { token: "w" } } })).toEqual(["default", "work"]);
    expect(() => ids({ accounts: { default: {}, work: { token: "w" } } })).toThrow(
      /^channels\.discord has no bot token/,
    );
    expect(() => ids({ accounts: {} })).toThrow(/^channels\.discord has no bot token/);
  });

  it("skips a disabled account", () => {
    expect(resolveDiscordAccounts(parse({ token: "a", enabled: false }), {})).toEqual([]);
  });

  it("treats a token of only 'Bot ' as missing", () => {
    expect(cleanToken("Bot ")).toBeUndefined();
  });
});

describe("channels.discord", () => {
  /** The problems the config check names for `channels.discord: raw`. */
  const problems = (raw: unknown): readonly string[] => {
    try {
      parseConfig({ channels: { discord: raw } });
      return [];
    } catch (error) {
      return (error as SwitchboardError).details;
    }
  };

  it("names a mistyped key with its path and the key meant, at the top level and in an account", () => {
    expect(problems({ tokn: "x" })).toEqual(["channels.discord.tokn: unknown key (did you mean token?)"]);
    expect(problems({ accounts: { work: { tokn: "x" } } })).toEqual([
      "channels.discord.accounts.work.tokn: unknown key (did you mean token?)",
    ]);
  });

  it("refuses an account id that would be read as a key word, and checks an account's guilds as the top level's", () => {
    expect(problems({ accounts: { dm: { token: "x" } } })).toEqual([
      expect.stringMatching(/^channels\.discord\.accounts\.dm: invalid key: must not be a reserved key word/),
    ]);
    expect(problems({ accounts: { work: { guilds: { "1": { users: ["1"], allowFrom: ["2"] } } } } })).toEqual([
      "channels.discord.accounts.work.guilds.1.users: users and allowFrom name the same list: keep one (allowFrom)",
    ]);
  });
});
