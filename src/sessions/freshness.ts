import type { ResolvedResetPolicy } from "./reset-policy.js";

/** Whether a session may take another turn, and if not, why. */
export interface Freshness {
  fresh: boolean;
  /** which limit made it stale */
  staleBy?: "daily" | "idle";
  /** ms; the first moment the session counts as stale */
  expiresAt: number;
}

/** The most recent daily reset boundary at or before `now`, in the host's local time (DST-safe). */
export function dailyBoundary(now: number, atHour: number): number {
  const date = new Date(now);
  const today = new Date(date.getFullYear(), date.getMonth(), date.getDate(), atHour).getTime();
  if (today <= now) return today;
  // Build yesterday from calendar fields, not by subtracting 24 h: days around DST are 23 or 25 h.
  return new Date(date.getFullYear(), date.getMonth(), date.getDate() - 1, atHour).getTime();
}

/** The first daily boundary after `time`. */
function nextDailyBoundary(time: number, atHour: number): number {
  const date = new Date(time);
  const today = new Date(date.getFullYear(), date.getMonth(), date.getDate(), atHour).getTime();
  return today > time ? today : new Date(date.getFullYear(), date.getMonth(), date.getDate() + 1, atHour).getTime();
}

/**
 * Evaluates a session whose last turn was at `updatedAt` (docs/sessions.md): daily, stale once
 * a reset boundary has passed since the last turn; idle, stale strictly after the window; both
 * configured, whichever comes first.
 */
export function evaluateFreshness(updatedAt: number, policy: ResolvedResetPolicy, now: number): Freshness {
  const daily = policy.mode === "daily" ? nextDailyBoundary(updatedAt, policy.atHour) : Infinity;
  // Exactly at the idle limit is still fresh, so the first stale millisecond is one later.
  const idle = policy.idleMinutes !== undefined ? updatedAt + policy.idleMinutes * 60_000 + 1 : Infinity;
  const expiresAt = Math.min(daily, idle);
  if (now < expiresAt) return { fresh: true, expiresAt };
  return { fresh: false, staleBy: daily <= idle ? "daily" : "idle", expiresAt };
}
