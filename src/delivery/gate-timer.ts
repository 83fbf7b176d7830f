/** The timer functions the gate uses for retries (injectable for tests). */
export interface GateTimers {
  /** `keepAlive`: the timer holds the process open (a stop's deadline); retry timers do not */
  setTimeout(callback: () => void, ms: number, keepAlive?: boolean): unknown;
  clearTimeout(handle: unknown): void;
}

/** The longest delay a Node timer takes. */
export const MAX_TIMER_MS = 2_147_483_647;

/** Node's timers; unref: a pending retry is on disk, so it must not keep the process alive. */
export const nodeTimers: GateTimers = {
  setTimeout: (callback, ms, keepAlive) => {
    const handle = setTimeout(callback, ms);
    return keepAlive ? handle : handle.unref();
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** One retry timer, always set for the earliest retry asked for; `fire` runs when it is due. */
export function createWakeTimer(timers: GateTimers, now: () => number, fire: () => void) {
  let timer: unknown;
  let timerAt = Number.POSITIVE_INFINITY;
  const clear = () => {
    if (timer !== undefined) timers.clearTimeout(timer);
    timer = undefined;
    timerAt = Number.POSITIVE_INFINITY;
  };
  return {
    /** Wakes at `at` unless an earlier wake is already set. */
    at(at: number): void {
      if (at >= timerAt) return;
      clear();
      timerAt = at;
      timer = timers.setTimeout(
        () => {
          timer = undefined;
          timerAt = Number.POSITIVE_INFINITY;
          fire();
        },
        Math.min(MAX_TIMER_MS, Math.max(0, at - now())),
      );
    },
    clear,
  };
}
