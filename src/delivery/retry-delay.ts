/**
 * How often and how patiently the delivery gate retries: an account's resolved `retry` setting,
 * whose default is `DEFAULT_RETRY` (`src/config/channel-table.ts`).
 */
export interface RetryOptions {
  /** an optional cap on attempts in all, the first included (undefined: only `maxAgeMs` ends retries) */
  attempts?: number | undefined;
  /** delay before the first retry */
  minDelayMs: number;
  /** the backoff never grows past this (a platform's retryAfterMs may) */
  maxDelayMs: number;
  /** a retryable failure ends the item once this long has passed since it was handed over */
  maxAgeMs: number;
}

/** Retries in the background until success or a stop: 1 s doubling to 1 min, no age limit (sub-agent recovery, a turn's next write). */
export const BACKGROUND_RETRY: RetryOptions = {
  minDelayMs: 1_000,
  maxDelayMs: 60_000,
  maxAgeMs: Number.POSITIVE_INFINITY,
};

/**
 * The wait before retry number `failures` (1 after the first failure): exponential backoff with
 * jitter in the upper half, so retries of many messages spread out; never shorter than the
 * platform's `retryAfterMs`.
 */
export function retryDelay(
  failures: number,
  options: RetryOptions,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const backoff = Math.min(options.maxDelayMs, options.minDelayMs * 2 ** Math.max(0, failures - 1));
  const jittered = Math.round(backoff / 2 + (random() * backoff) / 2);
  return Math.max(jittered, retryAfterMs ?? 0);
}
