import type { ResetPolicy, SessionConfig } from "../config/schema/session.js";
import type { ParsedSessionKey } from "../routing/session-key.js";

/** The session types reset policies can differ by. */
export type ResetType = "dm" | "group" | "thread";

/** A reset policy with every default applied. */
export interface ResolvedResetPolicy {
  mode: "daily" | "idle";
  /** hour of the gateway host's local day */
  atHour: number;
  /** sliding idle window; with mode daily it is an extra limit ("whichever expires first") */
  idleMinutes?: number;
}

/** Default hour of the daily reset, gateway host local time. */
const DEFAULT_RESET_AT_HOUR = 4;
/** Idle window when mode is idle and no minutes are set. */
const DEFAULT_IDLE_MINUTES = 60;

type ResetSettings = Pick<SessionConfig, "reset" | "resetByType" | "resetByChannel" | "idleMinutes">;

/**
 * The policy for a session of `type` on `channel` (docs/sessions.md): a `resetByChannel`
 * entry is the only source when present; otherwise the type override, then `reset`, then the
 * legacy `idleMinutes` (idle-only when neither `reset` nor `resetByType` is configured).
 */
export function resolveResetPolicy(session: ResetSettings, type: ResetType, channel?: string): ResolvedResetPolicy {
  const byChannel = channel ? session.resetByChannel?.[channel.trim().toLowerCase()] : undefined;
  const layers: Array<ResetPolicy | undefined> = byChannel ? [byChannel] : [session.resetByType?.[type], session.reset];
  const legacy = byChannel ? undefined : session.idleMinutes;
  const pick = <K extends keyof ResetPolicy>(field: K) => layers.find((layer) => layer?.[field] !== undefined)?.[field];
  const legacyIdleOnly = !byChannel && !session.reset && !session.resetByType && legacy !== undefined;
  const mode = pick("mode") ?? (legacyIdleOnly ? "idle" : "daily");
  const atHour = pick("atHour") ?? DEFAULT_RESET_AT_HOUR;
  const idleMinutes = pick("idleMinutes") ?? legacy ?? (mode === "idle" ? DEFAULT_IDLE_MINUTES : undefined);
  return { mode, atHour, ...(idleMinutes !== undefined && { idleMinutes }) };
}

/** `thread` for topics and threads (or when the caller knows it is one), `group` for groups and channels, else `dm`. */
export function resetTypeOf(key: ParsedSessionKey, hints: { isThread?: boolean } = {}): ResetType {
  if (hints.isThread || ("threadId" in key && key.threadId) || ("topicId" in key && key.topicId)) return "thread";
  if (key.chatType === "group" || key.chatType === "channel") return "group";
  return "dm";
}
