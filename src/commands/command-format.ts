import type { RunEnd } from "../agents/run-end.js";
import type { ResolvedResetPolicy } from "../sessions/reset-policy.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Token counts as `/status` shows them: `950`, `1.2k`, `12k`, `1.5m`. */
export function formatTokens(count: number): string {
  if (count < 1000) return String(Math.round(count));
  if (count < 10_000) return `${(count / 1000).toFixed(1).replace(/\.0$/, "")}k`;
  if (count < 1_000_000) return `${Math.round(count / 1000)}k`;
  return `${(count / 1_000_000).toFixed(1).replace(/\.0$/, "")}m`;
}

/** A span of time in the largest unit that fits: `45s`, `12m`, `5h` (under 48 h), `3d`. */
export function formatSpan(ms: number): string {
  const span = Math.max(0, ms);
  if (span < MINUTE) return `${Math.floor(span / 1000)}s`;
  if (span < HOUR) return `${Math.floor(span / MINUTE)}m`;
  if (span < 48 * HOUR) return `${Math.floor(span / HOUR)}h`;
  return `${Math.floor(span / (24 * HOUR))}d`;
}

/** How long ago `at` was: `just now` under a minute, else `12m ago`, `5h ago`, `3d ago`. */
export function formatAge(at: number, now: number): string {
  return now - at < MINUTE ? "just now" : `${formatSpan(now - at)} ago`;
}

/** A reset policy in words: `daily at 04:00`, `after 60 idle minutes`, or both. */
export function describeResetPolicy(policy: ResolvedResetPolicy): string {
  const idle = policy.idleMinutes === undefined ? undefined : `after ${policy.idleMinutes} idle minutes`;
  if (policy.mode === "idle") return idle ?? "idle";
  const daily = `daily at ${String(policy.atHour).padStart(2, "0")}:00`;
  return idle ? `${daily} or ${idle}, whichever comes first` : daily;
}

/** How `/subagents` and `/status` word a run's end: a stop asked for reads "stopped". */
export function formatRunEnd(end: RunEnd): string {
  return end === "aborted" ? "stopped" : end;
}
