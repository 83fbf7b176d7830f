import { APICallError, RetryError } from "ai";
import { SwitchboardError } from "../../errors.js";

/**
 * A model provider's refusal as a known error people may read (`MODEL_FAILED` with the HTTP status
 * and the provider's error as its cause); anything else is returned as it is.
 */
export function asModelError(err: unknown): unknown {
  const last = RetryError.isInstance(err) ? err.lastError : err;
  if (!APICallError.isInstance(last)) return err;
  const status = last.statusCode === undefined ? "without a status" : `with HTTP ${last.statusCode}`;
  const advice = last.isRetryable ? "; it may work again shortly" : "; check the model's key and name";
  return new SwitchboardError("MODEL_FAILED", `The model provider answered ${status}${advice}.`, { cause: err });
}
