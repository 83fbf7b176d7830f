import { GROUP_DEFAULTS } from "../config/channel-table.js";
import type { Config } from "../config/schema/index.js";
import { resolveSharedSettings } from "../delivery/account-settings.js";

/** The access settings of one channel account: the account's own fields over the channel's top level. */
export interface AccountAccess {
  dmPolicy: "allowlist" | "pairing" | "open" | "disabled";
  /** pairing codes: how long one lives, how many may wait at once */
  pairing: { codeTtlSeconds: number; maxPending: number };
  allowFrom: string[];
  groupPolicy: "allowlist" | "open" | "disabled";
  groupAllowFrom: string[];
  commandAllowFrom: string[];
  /** the account's `owners`, else the explicit (non-`*`) entries of its `allowFrom` */
  owners: string[];
  /** where `owners` came from: the `owners` list, or `allowFrom` because no `owners` list is set */
  ownersFrom: "owners" | "allowFrom";
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
