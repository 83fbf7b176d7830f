import { DeliveryError } from "../../src/index.js";

/** WhatsApp's answer when we send too fast; it names no wait, so the outbox waits this long. */
const RATE_LIMIT_WAIT_MS = 5_000;

/** The HTTP-like status code baileys puts on its errors (`Boom.output.statusCode`), if any. */
export function statusCodeOf(err: unknown): number | undefined {
  const code = (err as { output?: { statusCode?: unknown } } | undefined)?.output?.statusCode;
  return typeof code === "number" ? code : undefined;
}

/** A send that failed on the socket, as a {@link DeliveryError}: connection trouble is worth retrying. */
export function toDeliveryError(err: unknown): DeliveryError {
  if (err instanceof DeliveryError) return err;
  const status = statusCodeOf(err);
  const message = err instanceof Error ? err.message : String(err);
  if (status === 429 || /rate-overlimit/i.test(message))
    return new DeliveryError(`WhatsApp rate limit: ${message}`, {
      retryable: true,
      reason: "rate_limited",
      retryAfterMs: RATE_LIMIT_WAIT_MS,
      cause: err,
    });
  if (
    status === 408 ||
    status === 428 ||
    status === 440 ||
    status === 500 ||
    status === 503 ||
    status === 515 ||
    /connection (closed|lost)|timed\s*out|not connected|socket/i.test(message)
  )
    return new DeliveryError(`WhatsApp connection trouble: ${message}`, {
      retryable: true,
      reason: "network",
      cause: err,
    });
  if (status === 401)
    return new DeliveryError(`WhatsApp logged this device out: ${message}`, {
      retryable: false,
      reason: "logged_out",
      cause: err,
    });
  return new DeliveryError(`WhatsApp refused the message: ${message}`, {
    retryable: false,
    reason: "send_failed",
    cause: err,
  });
}
