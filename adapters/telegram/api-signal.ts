import type { Api } from "grammy";

/** The AbortSignal type grammy's API methods declare (from its `abort-controller` shim). */
export type ApiSignal = NonNullable<Parameters<Api["getUpdates"]>[1]>;

/**
 * Node's AbortSignal as grammy's declared type: grammy only calls `addEventListener("abort")` on
 * it, which Node's signal has; the two declarations merely differ in their event typings.
 */
export function apiSignal(signal: AbortSignal): ApiSignal {
  return signal as unknown as ApiSignal;
}
