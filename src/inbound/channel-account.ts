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
  /** per group id (or "*"): mention gating and who may talk there, with per-topic settings */
  groups: Record<string, { requireMention?: boolean; allowFrom?: string[]; topics?: Record<string, { requireMention?: boolean; allowFrom?: string[] }> }>;
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
