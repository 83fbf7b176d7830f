import {
  DEFAULT_ACCOUNT_ID,
  ErrorCodes,
  SwitchboardError,
  accountConfigPath,
  channelAccountIds,
  resolveAccountSettings,
  skipsBareDefault,
} from "../../src/index.js";
import { type DiscordConfig, type DiscordSettings, discordConfig } from "./discord-config.js";

/** One bot to run: its token and its complete settings. */
export interface DiscordAccount {
  accountId: string;
  token: string;
  settings: DiscordSettings;
}

/** A token as Discord's developer portal shows it; a pasted `Bot ` prefix (the header form) is dropped. */
export function cleanToken(raw: string | undefined): string | undefined {
  const token = raw?.replace(/^\s*Bot(?:\s+|$)/i, "").trim();
  return token ? token : undefined;
}

/**
 * The bots to run. The top level is the `default` account; `accounts.<id>` add bots that inherit
 * the top level's shared settings but not its token. Token order: `token`, then
 * (default account only) DISCORD_BOT_TOKEN. The default account is skipped when other accounts
 * exist and it has no token; with no accounts at all a missing token is an error naming where to
 * put one.
 */
export function resolveDiscordAccounts(
  config: DiscordConfig,
  env: Readonly<Record<string, string | undefined>>,
): DiscordAccount[] {
  const resolved: DiscordAccount[] = [];
  for (const accountId of channelAccountIds(config)) {
    const settings = resolveAccountSettings(discordConfig, config, accountId);
    if (!settings.enabled) continue;
    const isDefault = accountId === DEFAULT_ACCOUNT_ID;
    const token = cleanToken(settings.token) ?? (isDefault ? cleanToken(env.DISCORD_BOT_TOKEN) : undefined);
    if (!token) {
      if (skipsBareDefault(config, accountId, false)) continue;
      throw new SwitchboardError(
        ErrorCodes.CONFIG_INVALID,
        `${accountConfigPath("discord", accountId)} has no bot token: set token${isDefault ? ", or DISCORD_BOT_TOKEN" : ""} (Discord developer portal > your application > Bot > Reset Token).`,
      );
    }
    resolved.push({ accountId, token, settings });
  }
  return resolved;
}
