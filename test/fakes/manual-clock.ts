// A clock and timers that move only when a test says so, for code that takes `now` and timers in deps.

interface Timer {
  at: number;
  callback: () => void;
}

/** A manual clock: `now`, `timers` ({ setTimeout, clearTimeout }) and `advance`. */
export interface ManualClock {
  now: () => number;
  timers: { setTimeout(callback: () => void, ms: number): unknown; clearTimeout(handle: unknown): void };
  /** moves time forward by `ms`, running every timer that falls due, in order */
  advance(ms: number): void;
  /** when the earliest timer is due, if any */
  nextTimerAt(): number | undefined;
}

/** Creates a manual clock starting at `start` (ms). */
export function createManualClock(start = 1_700_000_000_000): ManualClock {
  let time = start;
  let nextId = 1;
  const timers = new Map<number, Timer>();
  const earliest = () => [...timers.entries()].sort((a, b) => a[1].at - b[1].at)[0];
  return {
    now: () => time,
    timers: {
      setTimeout(callback, ms) {
        const id = nextId++;
        timers.set(id, { at: time + Math.max(0, ms), callback });
        return id;
      },
      clearTimeout(handle) {
        timers.delete(handle as number);
      },
    },
    advance(ms) {
      const until = time + ms;
      for (let next = earliest(); next && next[1].at <= until; next = earliest()) {
        timers.delete(next[0]);
        time = next[1].at;
        next[1].callback();
      }
      time = until;
    },
    nextTimerAt: () => earliest()?.[1].at,
  };
}
