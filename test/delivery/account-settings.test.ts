import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { CHANNELS as TABLE } from "../../adapters/index.js";
import type { Config } from "../../src/config/index.js";
import {
  accountConfigPath,
  channelAccountIds,
  resolveAccountSettings,
  skipsBareDefault,
} from "../../src/delivery/account-settings.js";
import { parseConfig } from "../adapters/table-config.js";

type ConfiguredChannel = "telegram" | "discord" | "whatsapp";

const RETRY_A = { attempts: 2, minDelayMs: 10, maxDelayMs: 20 };
const RETRY_B = { attempts: 5, minDelayMs: 30, maxDelayMs: 40 };

const ACCESS_A = {
  enabled: true,
  dmPolicy: "open",
  pairing: { codeTtlSeconds: 60, maxPending: 1 },
  allowFrom: ["1"],
  groupPolicy: "disabled",
  groupAllowFrom: ["2"],
  commandAllowFrom: ["3"],
  owners: ["4"],
};
const ACCESS_B = {
  enabled: false,
  dmPolicy: "pairing",
  pairing: { codeTtlSeconds: 120, maxPending: 5 },
  allowFrom: ["11"],
  groupPolicy: "open",
  groupAllowFrom: ["12"],
  commandAllowFrom: ["13"],
  owners: ["14"],
};

/** Two different values for every field each channel's accounts may set: A at the top level, B on an account. */
const VALUES: Record<ConfiguredChannel, { a: Record<string, unknown>; b: Record<string, unknown> }> = {
  telegram: {
    a: {
      ...ACCESS_A,
      botToken: "1:A",
      tokenFile: "a.txt",
      apiRoot: "http://127.0.0.1:1/",
      groups: { "-1": { requireMention: false } },
      replyToMode: "all",
      textChunkLimit: 1000,
      webhookUrl: "https://a.example/tg",
      webhookSecret: "sa",
      webhookPath: "/a",
      timeoutSeconds: 5,
      retry: RETRY_A,
      nativeCommands: false,
    },
    b: {
      ...ACCESS_B,
      botToken: "2:B",
      tokenFile: "b.txt",
      apiRoot: "http://127.0.0.1:2/",
      groups: { "-2": { requireMention: true } },
      replyToMode: "off",
      textChunkLimit: 2000,
      webhookUrl: "https://b.example/tg",
      webhookSecret: "sb",
      webhookPath: "/b",
      timeoutSeconds: 6,
      retry: RETRY_B,
      nativeCommands: true,
    },
  },
  discord: {
    a: {
      ...ACCESS_A,
      token: "ta",
      apiRoot: "http://127.0.0.1:1/",
      guilds: { "1": { requireMention: false } },
      allowBots: true,
      replyToMode: "all",
      textChunkLimit: 1000,
      maxLinesPerMessage: 5,
      retry: RETRY_A,
      nativeCommands: false,
      commandGuilds: ["10"],
      groupDms: true,
    },
    b: {
      ...ACCESS_B,
      token: "tb",
      apiRoot: "http://127.0.0.1:2/",
      guilds: { "2": { channels: { "3": { allow: false } } } },
      allowBots: false,
      replyToMode: "first",
      textChunkLimit: 1500,
      maxLinesPerMessage: 9,
      retry: RETRY_B,
      nativeCommands: true,
      commandGuilds: ["20"],
      groupDms: false,
    },
  },
  whatsapp: {
    a: {
      ...ACCESS_A,
      authDir: "/tmp/a",
      groups: { "1@g.us": { requireMention: false } },
      selfChatMode: true,
      sendReadReceipts: false,
      replyToMode: "off",
      textChunkLimit: 1000,
      debounceMs: 100,
      retry: RETRY_A,
    },
    b: {
      ...ACCESS_B,
      authDir: "/tmp/b",
      groups: { "2@g.us": { allowFrom: ["5"] } },
      selfChatMode: false,
      sendReadReceipts: true,
      replyToMode: "all",
      textChunkLimit: 3000,
      debounceMs: 200,
      retry: RETRY_B,
    },
  },
};

const CHANNELS = Object.keys(VALUES) as ConfiguredChannel[];
const definition = (channel: string) => TABLE.find((c) => c.id === channel)!;
const SCHEMAS = Object.fromEntries(
  CHANNELS.map((channel) => [channel, definition(channel).schema as z.ZodObject]),
) as Record<ConfiguredChannel, z.ZodObject>;
const CHANNEL_DEFAULTS = Object.fromEntries(
  CHANNELS.map((channel) => [channel, definition(channel).defaults]),
) as unknown as Record<ConfiguredChannel, Record<string, unknown>>;

function configOf(channels: Record<string, unknown>) {
  return parseConfig({ channels }).config;
}

/** One account's complete settings, by the channel's definition in the table. */
function resolveChannelSettings(config: Config, channel: string, accountId: string) {
  return resolveAccountSettings(definition(channel), config.channels[channel], accountId) as unknown as Record<
    string,
    unknown
  >;
}

describe("each channel's defaults", () => {
  it.each(CHANNELS)("has a default for every field a %s account may set, and nothing else", (channel) => {
    const schemaFields = Object.keys(SCHEMAS[channel].shape).filter((field) => field !== "accounts");
    const defaultFields = Object.keys(CHANNEL_DEFAULTS[channel]).filter((field) => field !== "ownersFrom");
    expect(defaultFields.sort()).toEqual(schemaFields.sort());
    expect(Object.keys(VALUES[channel].a).sort()).toEqual(schemaFields.sort());
  });

  it("keeps each platform's message limits in one table", () => {
    expect(CHANNEL_DEFAULTS.telegram.textChunkLimit).toBe(4000);
    expect(CHANNEL_DEFAULTS.discord).toMatchObject({ textChunkLimit: 2000, maxLinesPerMessage: 17 });
    expect(CHANNEL_DEFAULTS.whatsapp.textChunkLimit).toBe(4000);
  });
});

describe("resolveAccountSettings", () => {
  it.each(CHANNELS)("gives an unconfigured %s channel the complete defaults, which let nobody in", (channel) => {
    const settings = resolveChannelSettings(configOf({}), channel, "default");
    expect(settings).toEqual(CHANNEL_DEFAULTS[channel]);
    expect(settings).toMatchObject({ dmPolicy: "allowlist", allowFrom: [], groupPolicy: "allowlist", owners: [] });
  });

  it.each(CHANNELS)("applies the %s channel's top level to the default account, every field", (channel) => {
    const { a } = VALUES[channel];
    const settings = resolveChannelSettings(configOf({ [channel]: a }), channel, "default");
    expect(settings).toEqual({ ...SCHEMAS[channel].parse(a), ownersFrom: "owners" });
  });

  it.each(CHANNELS)("lets a %s account override the channel in every field", (channel) => {
    const { a, b } = VALUES[channel];
    const config = configOf({ [channel]: { ...a, accounts: { Work: b } } });
    expect(resolveChannelSettings(config, channel, "work")).toEqual({
      ...SCHEMAS[channel].parse(b),
      ownersFrom: "owners",
    });
    // the default account keeps the top level's values
    expect(resolveChannelSettings(config, channel, "default")).toEqual({
      ...SCHEMAS[channel].parse(a),
      ownersFrom: "owners",
    });
  });

  it.each(CHANNELS)(
    "gives an unknown %s account the channel's values, except fields that belong to one account",
    (channel) => {
      const { a } = VALUES[channel];
      const settings = resolveChannelSettings(configOf({ [channel]: a }), channel, "elsewhere");
      const own = definition(channel).perAccountFields;
      for (const [field, value] of Object.entries(SCHEMAS[channel].parse(a))) {
        const expected = own.includes(field) ? undefined : value;
        expect({ field, value: (settings as unknown as Record<string, unknown>)[field] }).toEqual({
          field,
          value: expected,
        });
      }
    },
  );

  it("takes an account's owners from its explicit allowFrom entries when no owners list is set", () => {
    const config = configOf({ telegram: { allowFrom: ["42", "*", "tg:*"], accounts: { work: { owners: [] } } } });
    expect(resolveChannelSettings(config, "telegram", "default")).toMatchObject({
      owners: ["42"],
      ownersFrom: "allowFrom",
    });
    expect(resolveChannelSettings(config, "telegram", "work")).toMatchObject({ owners: [], ownersFrom: "owners" });
  });

  it("keeps a field the account leaves out at the channel's value, not the default", () => {
    const config = configOf({ discord: { maxLinesPerMessage: 40, accounts: { work: { textChunkLimit: 500 } } } });
    expect(resolveChannelSettings(config, "discord", "work")).toMatchObject({
      maxLinesPerMessage: 40,
      textChunkLimit: 500,
    });
  });
});

describe("channelAccountIds", () => {
  it("lists the default account first, then each named account once, normalized", () => {
    expect(channelAccountIds({ accounts: { Work: {}, default: {}, home: {} } })).toEqual(["default", "work", "home"]);
    expect(channelAccountIds(undefined)).toEqual(["default"]);
  });
});

describe("skipsBareDefault", () => {
  it.each([
    ["no accounts: the default runs (or its missing token is an error)", {}, "default", false, false],
    ["others named, the default not: skipped", { accounts: { work: {} } }, "default", false, true],
    [
      "others named, the default too (any case): runs",
      { accounts: { work: {}, Default: {} } },
      "default",
      false,
      false,
    ],
    ["others named, the default has its own credential: runs", { accounts: { work: {} } }, "default", true, false],
    ["a named account is never skipped here", { accounts: { work: {} } }, "work", false, false],
  ])("%s", (_, section, accountId, hasCredential, skipped) => {
    expect(skipsBareDefault(section, accountId, hasCredential)).toBe(skipped);
  });
});

describe("accountConfigPath", () => {
  it("names the top level for the default account and accounts.<id> for others", () => {
    expect(accountConfigPath("telegram", "default")).toBe("channels.telegram");
    expect(accountConfigPath("whatsapp", "work")).toBe("channels.whatsapp.accounts.work");
  });
});
