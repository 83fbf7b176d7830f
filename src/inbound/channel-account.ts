import type { Config } from "../config/schema/index.js";
import { normalizeAccountId } from "../routing/normalize.js";

/** The access settings of one channel account: the account's own fields over the channel's top level. */
export interface AccountAccess {
  dmPolicy: "allowlist" | "open" | "disabled";
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

type ChannelSection = Record<string, unknown> & { accounts?: Record<string, Record<string, unknown>> };

/** `*`, `tg:*`, `discord:*`: an entry that means everyone, never one person. */
function isWildcard(entry: string): boolean {
  return /^(?:[a-z]+:)?\*$/i.test(entry.trim());
}

/**
 * Resolves an account's access settings; a channel that is not configured allows nobody. Without an
 * `owners` list (on the account or the channel), the people named in `allowFrom` own the account;
 * `owners: []` written out means nobody does.
 */
export function resolveAccountAccess(
  config: Pick<Config, "channels">,
  channel: string,
  accountId: string,
): AccountAccess {
  const section = (config.channels as Record<string, ChannelSection | undefined>)[channel];
  const account = Object.entries(section?.accounts ?? {}).find(
    ([id]) => normalizeAccountId(id) === normalizeAccountId(accountId),
  )?.[1];
  const pick = <T>(field: string, fallback: T): T => (account?.[field] ?? section?.[field] ?? fallback) as T;
  const allowFrom = pick<string[]>("allowFrom", []);
  const owners = pick<string[] | undefined>("owners", undefined);
  return {
    dmPolicy: pick("dmPolicy", "allowlist"),
    allowFrom,
    groupPolicy: pick("groupPolicy", "allowlist"),
    groupAllowFrom: pick("groupAllowFrom", []),
    commandAllowFrom: pick("commandAllowFrom", []),
    owners: owners ?? allowFrom.filter((entry) => !isWildcard(entry)),
    ownersFrom: owners ? "owners" : "allowFrom",
    groups: pick("groups", pick("guilds", {})),
  };
}
