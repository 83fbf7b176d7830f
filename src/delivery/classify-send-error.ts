import { DeliveryError } from "./channel-adapter.js";
import type { DeliveryFailure } from "./outbox-item.js";

/** A failed send, read for the retry decision. */
export interface ClassifiedSendError extends DeliveryFailure {
  retryable: boolean;
  /** the platform asked to wait at least this long */
  retryAfterMs?: number;
}

// Socket and DNS failures that a later attempt can get past (Node net/dns and undici codes).
const TRANSIENT_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "ENOTFOUND",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

function isTransient(err: unknown, depth = 0): boolean {
  if (!(err instanceof Error) || depth > 3) return false;
  const code = (err as NodeJS.ErrnoException).code;
  if (code && TRANSIENT_CODES.has(code)) return true;
  if (err.name === "TimeoutError" || err.name === "AbortError") return true;
  // fetch() reports network failures as TypeError("fetch failed") with the socket error as cause.
  return isTransient(err.cause, depth + 1) || (err instanceof TypeError && err.message === "fetch failed");
}

/**
 * Whether trying again can help: a {@link DeliveryError} says so itself; other errors are retried
 * only when they look like network trouble, so an adapter bug fails fast and visibly.
 */
export function classifySendError(err: unknown): ClassifiedSendError {
  if (err instanceof DeliveryError) {
    return {
      reason: err.reason,
      message: err.message,
      retryable: err.retryable,
      ...(err.retryAfterMs !== undefined && { retryAfterMs: err.retryAfterMs }),
    };
  }
  const message = err instanceof Error ? err.message : String(err);
  if (isTransient(err)) return { reason: "network", message, retryable: true };
  return { reason: "send_error", message, retryable: false };
}
