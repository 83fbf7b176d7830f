import type { z } from "zod";
import type { DiscordConfigSchema, TelegramConfigSchema, WhatsAppConfigSchema } from "./channels.js";

/** The fields one account of a channel may set (the channel's top level sets them for every account). */
type TelegramAccountFields = Omit<z.infer<typeof TelegramConfigSchema>, "accounts">;
/** The fields one Discord account may set. */
type DiscordAccountFields = Omit<z.infer<typeof DiscordConfigSchema>, "accounts">;
/** The fields one WhatsApp account may set. */
type WhatsAppAccountFields = Omit<z.infer<typeof WhatsAppConfigSchema>, "accounts">;

/** Fields without a default: present in the settings, `undefined` when not configured. */
type Complete<T, Open extends keyof T> = Required<Omit<T, Open>> & { [K in Open & string as K]: T[K] | undefined };

/** Who owns the account: its `owners` list, or the explicit entries of `allowFrom` when no `owners` is set. */
interface OwnerSource {
  ownersFrom: "owners" | "allowFrom";
}

/** One Telegram account's settings, every default applied. */
export type TelegramSettings = Complete<
  TelegramAccountFields,
  "botToken" | "tokenFile" | "apiRoot" | "webhookUrl" | "webhookSecret" | "webhookPath"
> &
  OwnerSource;
/** One Discord account's settings, every default applied. */
export type DiscordSettings = Complete<DiscordAccountFields, "token" | "apiRoot"> & OwnerSource;
/** One WhatsApp account's settings, every default applied. */
export type WhatsAppSettings = Complete<WhatsAppAccountFields, "authDir"> & OwnerSource;

/** The settings type of each platform channel. */
export interface ChannelSettingsMap {
  telegram: TelegramSettings;
  discord: DiscordSettings;
  whatsapp: WhatsAppSettings;
}
/** A channel with a `channels.<name>` config section. */
export type ConfiguredChannel = keyof ChannelSettingsMap;

/** The access tiers every channel account carries, and where they default to (nobody is let in). */
const ACCESS: Pick<
  TelegramSettings,
  | "enabled"
  | "dmPolicy"
  | "pairing"
  | "allowFrom"
  | "groupPolicy"
  | "groupAllowFrom"
  | "commandAllowFrom"
  | "owners"
  | "ownersFrom"
> = {
  enabled: true,
  dmPolicy: "allowlist",
  /** codes live an hour; three may wait for an owner at once */
  pairing: { codeTtlSeconds: 3600, maxPending: 3 },
  allowFrom: [],
  groupPolicy: "allowlist",
  groupAllowFrom: [],
  commandAllowFrom: [],
  owners: [],
  ownersFrom: "allowFrom",
};

/**
 * How the delivery gate retries a failed send that can succeed later (network trouble, 5xx, 429):
 * with exponential backoff from `minDelayMs` up to `maxDelayMs`, for up to `maxAgeMs` after the
 * message was handed over (12 hours), across restarts. Every channel's default, and the gate's for
 * channels without a config section (the web chat).
 */
export const DEFAULT_RETRY: TelegramSettings["retry"] = {
  attempts: undefined,
  minDelayMs: 500,
  maxDelayMs: 30_000,
  maxAgeMs: 12 * 60 * 60 * 1000,
};

/** Defaults of a group's rules (a Telegram or WhatsApp group, a Discord guild) and of its topics or channels. */
export const GROUP_DEFAULTS = {
  /** in a group the bot answers only when mentioned or replied to, unless the group's rule says otherwise */
  requireMention: true,
} as const;

/**
 * Every per-account default of every channel, in one table. The schema in `channels.ts` leaves
 * these fields optional so that an account can tell "not set" (inherit the channel's value) from
 * a value; `resolveAccountSettings` applies account, then channel, then this table.
 */
export const CHANNEL_DEFAULTS: { readonly [C in ConfiguredChannel]: ChannelSettingsMap[C] } = {
  telegram: {
    ...ACCESS,
    botToken: undefined,
    tokenFile: undefined,
    /** the Bot API's own address */
    apiRoot: undefined,
    groups: {},
    replyToMode: "first",
    /** Telegram's limit is 4096 */
    textChunkLimit: 4000,
    webhookUrl: undefined,
    webhookSecret: undefined,
    /** `/telegram-webhook` for the default account, `/telegram-webhook/<accountId>` for others */
    webhookPath: undefined,
    timeoutSeconds: 30,
    retry: DEFAULT_RETRY,
    nativeCommands: true,
  } satisfies TelegramSettings,
  discord: {
    ...ACCESS,
    token: undefined,
    /** Discord's REST API */
    apiRoot: undefined,
    guilds: {},
    allowBots: false,
    replyToMode: "off",
    /** Discord's limit */
    textChunkLimit: 2000,
    maxLinesPerMessage: 17,
    retry: DEFAULT_RETRY,
    nativeCommands: true,
    /** none: slash commands are registered globally */
    commandGuilds: [],
    groupDms: false,
  } satisfies DiscordSettings,
  whatsapp: {
    ...ACCESS,
    /** `$SWITCHBOARD_HOME/channels/whatsapp/<accountId>` */
    authDir: undefined,
    groups: {},
    selfChatMode: false,
    sendReadReceipts: true,
    /** replies quote the message they answer, first piece only */
    replyToMode: "first",
    textChunkLimit: 4000,
    debounceMs: 0,
    retry: DEFAULT_RETRY,
  } satisfies WhatsAppSettings,
};

/**
 * Fields that belong to one account (one bot, one linked device): the `default` account takes
 * them from the channel's top level, other accounts never inherit them.
 */
export const PER_ACCOUNT_FIELDS: { readonly [C in ConfiguredChannel]: ReadonlyArray<keyof ChannelSettingsMap[C]> } = {
  telegram: ["botToken", "tokenFile", "webhookUrl", "webhookSecret", "webhookPath"],
  discord: ["token"],
  whatsapp: ["authDir"],
};

/**
 * The prefixes a person may write before an id in `allowFrom`, `owners` and the like, per channel
 * (`tg:42` and `telegram:42` are Telegram's user 42). A channel not in the table takes `<channel>:`.
 */
const ENTRY_PREFIXES: { readonly [C in ConfiguredChannel]: readonly string[] } = {
  telegram: ["telegram:", "tg:"],
  discord: ["discord:"],
  whatsapp: ["whatsapp:"],
};

/** An access-list entry without case or its channel's prefix: `TG:42` on Telegram is `42`. */
export function stripEntryPrefix(entry: string, channel: string): string {
  const trimmed = entry.trim().toLowerCase();
  const prefixes = (ENTRY_PREFIXES as Record<string, readonly string[] | undefined>)[channel] ?? [`${channel}:`];
  const prefix = prefixes.find((p) => trimmed.startsWith(p));
  return prefix ? trimmed.slice(prefix.length) : trimmed;
}

/** An access-list entry without case or any channel's prefix (`tg:42`, `discord:42` and `42` are one). */
export function stripAnyEntryPrefix(entry: string): string {
  const trimmed = entry.trim().toLowerCase();
  const prefix = Object.values(ENTRY_PREFIXES)
    .flat()
    .find((p) => trimmed.startsWith(p));
  return prefix ? trimmed.slice(prefix.length) : trimmed;
}
