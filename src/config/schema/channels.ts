import { z } from "zod";
import { AccountIdSchema, AllowListSchema, ReplyToModeSchema, RetrySchema, accessFields } from "./access.js";

const mentionRule = {
  /** default: true in groups; the bot answers only when mentioned or replied to */
  requireMention: z.boolean().optional(),
  /** default: the account's groupAllowFrom; who may talk here */
  allowFrom: AllowListSchema.optional(),
};

/** Discord's own name for a guild's or channel's `allowFrom` (as configs of the system we follow write it). */
const discordUsersAlias = {
  /** the same as `allowFrom` (give one of the two) */
  users: AllowListSchema.optional(),
};

/** Reads `users` as `allowFrom`; giving both is a mistake the config check names. */
function usersAsAllowFrom<T extends { users?: string[] | undefined; allowFrom?: string[] | undefined }>(
  { users, ...rest }: T,
  ctx: z.RefinementCtx,
): Omit<T, "users"> {
  if (users === undefined) return rest;
  if (rest.allowFrom !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["users"],
      message: "users and allowFrom name the same list: keep one (allowFrom)",
    });
    return rest;
  }
  return { ...rest, allowFrom: users };
}

/** Fields a Telegram account may set (top level = the "default" account; `accounts.<id>` for others). */
const telegramAccountShape = {
  /** default: true */
  enabled: z.boolean().optional(),
  /** secret; else `tokenFile`, else TELEGRAM_BOT_TOKEN (default account only) */
  botToken: z.string().trim().min(1).optional(),
  /** path of a file holding the bot token */
  tokenFile: z.string().trim().min(1).optional(),
  /** default: "https://api.telegram.org"; a self-hosted Bot API server */
  apiRoot: z.url().optional(),
  ...accessFields,
  /** default: {}; per group chat id (or "*"), with per forum topic settings */
  groups: z
    .record(
      z.string(),
      z.strictObject({ ...mentionRule, topics: z.record(z.string(), z.strictObject(mentionRule)).optional() }),
    )
    .optional(),
  /** default: "first" */
  replyToMode: ReplyToModeSchema.optional(),
  /** default: 4000; Telegram's limit is 4096 */
  textChunkLimit: z.number().int().min(100).max(4096).optional(),
  /** webhook mode instead of long polling when set */
  webhookUrl: z.url().optional(),
  /** secret; checked against X-Telegram-Bot-Api-Secret-Token */
  webhookSecret: z.string().min(1).optional(),
  /** default: "/telegram-webhook" */
  webhookPath: z.string().startsWith("/").optional(),
  /** default: 30; seconds per Bot API request */
  timeoutSeconds: z.number().int().min(1).optional(),
  retry: RetrySchema.optional(),
  /** default: true; register the commands with setMyCommands */
  nativeCommands: z.boolean().optional(),
};

/** `channels.telegram`. */
export const TelegramConfigSchema = z.strictObject({
  ...telegramAccountShape,
  accounts: z.record(AccountIdSchema, z.strictObject(telegramAccountShape)).optional(),
});

const discordAccountShape = {
  /** default: true */
  enabled: z.boolean().optional(),
  /** secret; else DISCORD_BOT_TOKEN (default account only); a leading "Bot " is stripped */
  token: z.string().trim().min(1).optional(),
  /** default: Discord's REST API; a local server for tests */
  apiRoot: z.url().optional(),
  ...accessFields,
  /** default: {}; per guild id: mention gating, allowed users and channels */
  guilds: z
    .record(
      z.string(),
      z
        .strictObject({
          ...mentionRule,
          ...discordUsersAlias,
          channels: z
            .record(
              z.string(),
              z
                .strictObject({ allow: z.boolean().optional(), ...mentionRule, ...discordUsersAlias })
                .transform(usersAsAllowFrom),
            )
            .optional(),
        })
        .transform(usersAsAllowFrom),
    )
    .optional(),
  /** default: false; answer other bots */
  allowBots: z.boolean().optional(),
  /** default: "off" */
  replyToMode: ReplyToModeSchema.optional(),
  /** default: 2000; Discord's limit */
  textChunkLimit: z.number().int().min(100).max(2000).optional(),
  /** default: 17; lines per message before splitting (at least 3: a split code block needs its fence lines) */
  maxLinesPerMessage: z.number().int().min(3).optional(),
  retry: RetrySchema.optional(),
  /** default: true; register slash commands */
  nativeCommands: z.boolean().optional(),
  /** default: none (global slash commands); guild ids to register them in instead, where they appear at once */
  commandGuilds: z.array(z.string().regex(/^\d+$/, "a guild id is a number written as a string")).optional(),
  /** default: false; answer in group DMs (then gated like guild channels by groupPolicy) */
  groupDms: z.boolean().optional(),
};

/** `channels.discord`. */
export const DiscordConfigSchema = z.strictObject({
  ...discordAccountShape,
  accounts: z.record(AccountIdSchema, z.strictObject(discordAccountShape)).optional(),
});

const whatsappAccountShape = {
  /** default: true */
  enabled: z.boolean().optional(),
  /** default: `$SWITCHBOARD_HOME/channels/whatsapp/<accountId>`; linked-device credentials */
  authDir: z.string().trim().min(1).optional(),
  ...accessFields,
  /** default: {}; per group JID (or "*") */
  groups: z.record(z.string(), z.strictObject(mentionRule)).optional(),
  /** default: false; the bot answers in your own "message yourself" chat */
  selfChatMode: z.boolean().optional(),
  /** default: true */
  sendReadReceipts: z.boolean().optional(),
  /** default: "first"; replies quote the message they answer (first piece only, every piece, or never) */
  replyToMode: ReplyToModeSchema.optional(),
  /** default: 4000 */
  textChunkLimit: z.number().int().min(100).max(65_536).optional(),
  /** default: 0; wait this long for more messages from the same sender before a turn */
  debounceMs: z.number().int().min(0).optional(),
  retry: RetrySchema.optional(),
};

/** `channels.whatsapp` (no tokens: each account links as a device and keeps its `authDir`). */
export const WhatsAppConfigSchema = z.strictObject({
  ...whatsappAccountShape,
  accounts: z.record(AccountIdSchema, z.strictObject(whatsappAccountShape)).optional(),
});

/** `channels.*`: each channel is off until configured. */
export const ChannelsConfigSchema = z.strictObject({
  telegram: TelegramConfigSchema.optional(),
  discord: DiscordConfigSchema.optional(),
  whatsapp: WhatsAppConfigSchema.optional(),
});
