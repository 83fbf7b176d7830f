import { z } from "zod";
import {
  channelSectionSchema,
  type AccountSettingsOf,
  ReplyToModeSchema,
  SHARED_ACCOUNT_DEFAULTS,
  groupRuleFields,
  sharedAccountFields,
} from "../../src/index.js";

/** Fields a Telegram account may set (top level = the "default" account; `accounts.<id>` for others). */
const telegramAccountShape = {
  ...sharedAccountFields,
  /** secret; else `tokenFile`, else TELEGRAM_BOT_TOKEN (default account only) */
  botToken: z.string().trim().min(1).optional(),
  /** path of a file holding the bot token */
  tokenFile: z.string().trim().min(1).optional(),
  /** a self-hosted Bot API server */
  apiRoot: z.url().optional(),
  /** per group chat id (or "*"), with per forum topic settings */
  groups: z
    .record(
      z.string(),
      z.strictObject({
        ...groupRuleFields,
        topics: z.record(z.string(), z.strictObject(groupRuleFields)).optional(),
      }),
    )
    .optional(),
  replyToMode: ReplyToModeSchema.optional(),
  /** Telegram's limit is 4096 */
  textChunkLimit: z.number().int().min(100).max(4096).optional(),
  /** webhook mode instead of long polling when set */
  webhookUrl: z.url().optional(),
  /** secret; checked against X-Telegram-Bot-Api-Secret-Token */
  webhookSecret: z.string().min(1).optional(),
  webhookPath: z.string().startsWith("/").optional(),
  /** seconds per Bot API request */
  timeoutSeconds: z.number().int().min(1).optional(),
  /** register the commands with setMyCommands */
  nativeCommands: z.boolean().optional(),
};

/** `channels.telegram`. */
export const TelegramConfigSchema = channelSectionSchema(telegramAccountShape);

/** `channels.telegram` as validated. */
export type TelegramConfig = z.infer<typeof TelegramConfigSchema>;

/** One Telegram account's settings, every default applied. */
export type TelegramSettings = AccountSettingsOf<
  TelegramConfig,
  "botToken" | "tokenFile" | "apiRoot" | "webhookUrl" | "webhookSecret" | "webhookPath"
>;

/** The config half of the Telegram channel: its schema, defaults and per-account fields. */
export const telegramConfig = {
  id: "telegram",
  schema: TelegramConfigSchema,
  defaults: {
    ...SHARED_ACCOUNT_DEFAULTS,
    botToken: undefined,
    tokenFile: undefined,
    /** the Bot API's own address */
    apiRoot: undefined,
    groups: {},
    replyToMode: "first",
    textChunkLimit: 4000,
    webhookUrl: undefined,
    webhookSecret: undefined,
    /** `/telegram-webhook` for the default account, `/telegram-webhook/<accountId>` for others */
    webhookPath: undefined,
    timeoutSeconds: 30,
    nativeCommands: true,
  } satisfies TelegramSettings as TelegramSettings,
  perAccountFields: ["botToken", "tokenFile", "webhookUrl", "webhookSecret", "webhookPath"],
} as const;
