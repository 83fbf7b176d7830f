// baileys' DisconnectReason values, written out so this module (loaded by every CLI command) does not load baileys.
const LOGGED_OUT = 401;
const RESTART_REQUIRED = 515;

/** Delays between reconnect attempts: `minMs * factor^n` up to `maxMs`, each with ±`jitter`. */
export interface ReconnectBackoff {
  minMs: number;
  maxMs: number;
  factor: number;
  /** 0.25: each delay is moved by up to a quarter either way, so many devices do not retry in step */
  jitter: number;
}

/** 2 s, growing by 1.8 up to 30 s, with a quarter of jitter. */
export const DEFAULT_BACKOFF: ReconnectBackoff = { minMs: 2_000, maxMs: 30_000, factor: 1.8, jitter: 0.25 };

/** What to do after the socket closed. */
export type ReconnectDecision =
  | { action: "reconnect"; delayMs: number }
  | { action: "stop"; reason: "logged_out" | "stopped"; message: string };

/** The message an owner sees (logs, `channels status`, `/status`) when WhatsApp unlinked the device. */
function relinkMessage(accountId: string): string {
  const flag = accountId === "default" ? "" : ` --account ${accountId}`;
  return `WhatsApp logged this device out (account "${accountId}"). Link it again: switchboard channels login whatsapp${flag}`;
}

/**
 * Decides after a close with `statusCode` (baileys' `DisconnectReason`) and `attempt` earlier
 * failures in a row. Logged out (401) stops for good: reconnecting would only fail again, so the
 * owner must link again. A restart request (515, sent right after linking) reconnects at once.
 * Everything else reconnects with backoff, for as long as the gateway runs.
 */
export function decideReconnect(
  statusCode: number | undefined,
  attempt: number,
  accountId: string,
  backoff: ReconnectBackoff = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): ReconnectDecision {
  if (statusCode === LOGGED_OUT) return { action: "stop", reason: "logged_out", message: relinkMessage(accountId) };
  if (statusCode === RESTART_REQUIRED && attempt === 0) return { action: "reconnect", delayMs: 0 };
  const base = Math.min(backoff.maxMs, backoff.minMs * backoff.factor ** attempt);
  const spread = base * backoff.jitter * (random() * 2 - 1);
  return { action: "reconnect", delayMs: Math.max(0, Math.round(base + spread)) };
}
