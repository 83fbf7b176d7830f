/** How often and how patiently the delivery gate retries. */
export interface RetryOptions {
  /** default: 5; attempts in all, the first included */
  attempts: number;
  /** default: 500; delay before the first retry */
  minDelayMs: number;
  /** default: 30000; the backoff never grows past this (a platform's retryAfterMs may) */
  maxDelayMs: number;
}

/** The defaults of {@link RetryOptions}. */
export const DEFAULT_RETRY: RetryOptions = { attempts: 5, minDelayMs: 500, maxDelayMs: 30_000 };

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
