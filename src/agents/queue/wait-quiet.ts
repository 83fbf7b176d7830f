/** The timers a debounce waits on (a manual clock's in tests). */
export interface QueueTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The process's own timers. */
export const REAL_TIMERS: QueueTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Waits `ms` on `timers`; rejects with the signal's reason when it aborts first. */
function sleep(ms: number, timers: QueueTimers, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    signal.throwIfAborted();
    const onAbort = () => {
      timers.clearTimeout(handle);
      reject(signal.reason);
    };
    const handle = timers.setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Waits until `remaining()` (ms still to wait, moved on by every message that joins) is 0 or less. */
export async function waitQuiet(remaining: () => number, timers: QueueTimers, signal: AbortSignal): Promise<void> {
  for (let ms = remaining(); ms > 0; ms = remaining()) await sleep(ms, timers, signal);
}
