import { type Config, DEFAULT_ACCOUNT_ID, ErrorCodes, SwitchboardError, normalizeAccountId } from "../../src/index.js";

/** `channels.discord` as validated by the core's config schema. */
export type DiscordConfig = NonNullable<Config["channels"]["discord"]>;
/** The settings of one account: its own fields over the channel's top level. */
type DiscordAccountSettings = Omit<DiscordConfig, "accounts">;

/** One bot to run: its token and its settings. */
export interface DiscordAccount {
  accountId: string;
  token: string;
  settings: DiscordAccountSettings;
}

// Fields that belong to one bot: never inherited by other accounts from the top level.
const OWN_FIELDS = ["token", "commandGuilds"] as const;

/** A token as Discord's developer portal shows it; a pasted `Bot ` prefix (the header form) is dropped. */
export function cleanToken(raw: string | undefined): string | undefined {
  const token = raw?.replace(/^\s*Bot(?:\s+|$)/i, "").trim();
  return token ? token : undefined;
}

const whereOf = (accountId: string) =>
  accountId === DEFAULT_ACCOUNT_ID ? "channels.discord" : `channels.discord.accounts.${accountId}`;

/**
 * The bots to run. The top level is the `default` account; `accounts.<id>` add bots that inherit
 * the top level's shared settings but not its token. Token order: `token`, then (default account
 * only) DISCORD_BOT_TOKEN. The default account is skipped when other accounts exist and it has no
 * token; with no accounts at all a missing token is an error naming where to put one.
 */
export function resolveDiscordAccounts(
  config: DiscordConfig,
  env: Readonly<Record<string, string | undefined>>,
): DiscordAccount[] {
  const { accounts = {}, ...top } = config;
  const shared: DiscordAccountSettings = { ...top };
  for (const field of OWN_FIELDS) delete shared[field];
  const entries = new Map<string, DiscordAccountSettings>([[DEFAULT_ACCOUNT_ID, top]]);
  for (const [rawId, fields] of Object.entries(accounts)) {
    const id = normalizeAccountId(rawId);
    entries.set(id, { ...(id === DEFAULT_ACCOUNT_ID ? top : shared), ...fields });
  }
  const resolved: DiscordAccount[] = [];
  for (const [accountId, settings] of entries) {
    if (settings.enabled === false) continue;
    const isDefault = accountId === DEFAULT_ACCOUNT_ID;
    const token = cleanToken(settings.token) ?? (isDefault ? cleanToken(env.DISCORD_BOT_TOKEN) : undefined);
    if (!token) {
      if (isDefault && entries.size > 1 && !(DEFAULT_ACCOUNT_ID in accounts)) continue;
      throw new SwitchboardError(
        ErrorCodes.CONFIG_INVALID,
        `${whereOf(accountId)} has no bot token: set token${isDefault ? ", or DISCORD_BOT_TOKEN" : ""} (Discord developer portal > your application > Bot > Reset Token).`,
      );
    }
    resolved.push({ accountId, token, settings });
  }
  return resolved;
}

/** Where an account's settings live in the config, for messages that tell the user what to change. */
export function configPathOf(accountId: string): string {
  return whereOf(accountId);
}
