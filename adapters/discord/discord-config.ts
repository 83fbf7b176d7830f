import { z } from "zod";
import {
  type AccountSettingsOf,
  AllowListSchema,
  ReplyToModeSchema,
  SHARED_ACCOUNT_DEFAULTS,
  channelSectionSchema,
  groupRuleFields,
  sharedAccountFields,
} from "../../src/index.js";

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

/** A guild channel's rules: `allow: false` switches it off. */
const channelRules = z
  .strictObject({ allow: z.boolean().optional(), ...groupRuleFields, ...discordUsersAlias })
  .transform(usersAsAllowFrom);

/** A guild's rules: mention gating, allowed users and its channels. */
const guildRules = z
  .strictObject({
    ...groupRuleFields,
    ...discordUsersAlias,
    channels: z.record(z.string(), channelRules).optional(),
  })
  .transform(usersAsAllowFrom);

const discordAccountShape = {
  ...sharedAccountFields,
  /** secret; else DISCORD_BOT_TOKEN (default account only); a leading "Bot " is stripped */
  token: z.string().trim().min(1).optional(),
  /** Discord's REST API when not set; a local server for tests */
  apiRoot: z.url().optional(),
  /** per guild id: mention gating, allowed users and channels */
  guilds: z.record(z.string(), guildRules).optional(),
  /** answer other bots */
  allowBots: z.boolean().optional(),
  replyToMode: ReplyToModeSchema.optional(),
  /** Discord's limit is 2000 */
  textChunkLimit: z.number().int().min(100).max(2000).optional(),
  /** lines per message before splitting (at least 3: a split code block needs its fence lines) */
  maxLinesPerMessage: z.number().int().min(3).optional(),
  /** register slash commands */
  nativeCommands: z.boolean().optional(),
  /** guild ids to register slash commands in instead of globally, where they appear at once */
  commandGuilds: z.array(z.string().regex(/^\d+$/, "a guild id is a number written as a string")).optional(),
  /** answer in group DMs (then gated like guild channels by groupPolicy) */
  groupDms: z.boolean().optional(),
};

/** `channels.discord`. */
export const DiscordConfigSchema = channelSectionSchema(discordAccountShape);

/** `channels.discord` as validated. */
export type DiscordConfig = z.infer<typeof DiscordConfigSchema>;

/** One Discord account's settings, every default applied. */
export type DiscordSettings = AccountSettingsOf<DiscordConfig, "token" | "apiRoot">;

/** The config half of the Discord channel: its schema, defaults and per-account fields; its groups are guilds. */
export const discordConfig = {
  id: "discord",
  schema: DiscordConfigSchema,
  defaults: {
    ...SHARED_ACCOUNT_DEFAULTS,
    token: undefined,
    apiRoot: undefined,
    guilds: {},
    allowBots: false,
    replyToMode: "off",
    textChunkLimit: 2000,
    maxLinesPerMessage: 17,
    nativeCommands: true,
    /** none: slash commands are registered globally */
    commandGuilds: [],
    groupDms: false,
  } satisfies DiscordSettings as DiscordSettings,
  perAccountFields: ["token"],
  groupsKey: "guilds",
} as const;
