import { GROUP_DEFAULTS, type SharedAccountSettings } from "../config/channel-table.js";
import type { Config } from "../config/schema/index.js";
import { resolveSharedSettings } from "../delivery/account-settings.js";

/**
 * The access settings of one channel account: the shared fields the config's channel table gives
 * every account (the account's own over the channel's top level), and its groups' rules.
 */
export interface AccountAccess extends Omit<SharedAccountSettings, "enabled" | "retry"> {
  /** per group or guild id (or "*"): mention gating and who may talk there, with per-topic or per-channel settings */
  groups: Record<string, GroupRules>;
  /** whether a group with no `requireMention` rule of its own needs a mention */
  requireMention: boolean;
}

/** Rules for one place where people talk; `allow: false` switches a Discord channel off. */
interface PlaceRules {
  requireMention?: boolean;
  allowFrom?: string[];
  allow?: boolean;
}

/** A group (Telegram/WhatsApp chat, Discord guild) with its forum topics or channels. */
interface GroupRules extends PlaceRules {
  topics?: Record<string, PlaceRules>;
  channels?: Record<string, PlaceRules>;
}

/**
 * Resolves an account's access settings from its shared settings (the channel's groups, whatever it
 * calls them, under `groups`); a channel that is not configured allows nobody.
 */
export function resolveAccountAccess(
  config: Pick<Config, "channels">,
  channel: string,
  accountId: string,
): AccountAccess {
  const settings = resolveSharedSettings(config, channel, accountId);
  const { dmPolicy, pairing, allowFrom, groupPolicy, groupAllowFrom, commandAllowFrom, owners, ownersFrom } = settings;
  const groups = settings.groups as Record<string, GroupRules>;
  const { requireMention } = GROUP_DEFAULTS;
  return {
    dmPolicy,
    pairing,
    allowFrom,
    groupPolicy,
    groupAllowFrom,
    commandAllowFrom,
    owners,
    ownersFrom,
    groups,
    requireMention,
  };
}
