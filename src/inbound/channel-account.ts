import type { Config } from "../config/schema/index.js";
import { normalizeAccountId } from "../routing/normalize.js";

/** The access settings of one channel account: the account's own fields over the channel's top level. */
export interface AccountAccess {
  dmPolicy: "allowlist" | "open" | "disabled";
  allowFrom: string[];
  groupPolicy: "allowlist" | "open" | "disabled";
  groupAllowFrom: string[];
  commandAllowFrom: string[];
  owners: string[];
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
export interface GroupRules extends PlaceRules {
  topics?: Record<string, PlaceRules>;
  channels?: Record<string, PlaceRules>;
}

type ChannelSection = Record<string, unknown> & { accounts?: Record<string, Record<string, unknown>> };

/** Resolves an account's access settings; a channel that is not configured allows nobody. */
export function resolveAccountAccess(config: Pick<Config, "channels">, channel: string, accountId: string): AccountAccess {
  const section = (config.channels as Record<string, ChannelSection | undefined>)[channel];
  const account = Object.entries(section?.accounts ?? {}).find(([id]) => normalizeAccountId(id) === normalizeAccountId(accountId))?.[1];
  const pick = <T>(field: string, fallback: T): T => (account?.[field] ?? section?.[field] ?? fallback) as T;
  return {
    dmPolicy: pick("dmPolicy", "allowlist"),
    allowFrom: pick("allowFrom", []),
    groupPolicy: pick("groupPolicy", "allowlist"),
    groupAllowFrom: pick("groupAllowFrom", []),
    commandAllowFrom: pick("commandAllowFrom", []),
    owners: pick("owners", []),
    groups: pick("groups", pick("guilds", {})),
  };
}
