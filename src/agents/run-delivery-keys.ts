/**
 * The idempotency keys of what a run delivers, in one place: the gate's outbox item ids, and (with
 * `#<piece>`) the ids a gateway client sees on `chat.delivery`, so a client can tell which run a
 * delivery belongs to.
 */

/** The key of a run's reply. */
export const replyKey = (runId: string): string => `${runId}:reply`;

/** The key of the notice that a run failed or timed out. */
export const failureKey = (runId: string): string => `${runId}:error`;

/** True when a delivered piece's id (`<key>#<n>`) belongs to the delivery with `key`. */
export const isPieceOf = (messageId: string, key: string): boolean =>
  messageId === key || messageId.startsWith(`${key}#`);
