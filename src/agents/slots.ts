/** At most `limit` holders at once; the others wait in arrival order. */
export interface Slots {
  /**
   * Resolves with a `release` (calling it more than once frees one slot only) when a slot is free
   * and everyone who asked earlier has one; rejects with the signal's reason, and stops waiting,
   * when `signal` aborts first. With `first`, the caller waits ahead of everyone who did not ask
   * for it (a holder that gave its slot back for a while takes one again before newcomers).
   */
  acquire(signal?: AbortSignal, options?: { first?: boolean }): Promise<() => void>;
  /** Slots held now. */
  readonly held: number;
  /** Callers waiting for a slot. */
  readonly waiting: number;
}

interface Waiter {
  grant: (release: () => void) => void;
}

/** Creates {@link Slots} with `limit` (at least 1) slots. */
export function createSlots(limit: number): Slots {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`slots need a whole limit of at least 1, not ${limit}`);
  let held = 0;
  // Insertion order is arrival order; `first` waiters are served before the others.
  const ahead = new Set<Waiter>();
  const queue = new Set<Waiter>();

  function releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const line = ahead.size > 0 ? ahead : queue;
      const next = line.values().next();
      if (next.done) {
        held--;
        return;
      }
      // The slot passes straight to the longest waiter: a newcomer never overtakes it.
      line.delete(next.value);
      next.value.grant(releaser());
    };
  }

  return {
    acquire(signal, options) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (held < limit && queue.size === 0 && ahead.size === 0) {
        held++;
        return Promise.resolve(releaser());
      }
      const line = options?.first ? ahead : queue;
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          line.delete(waiter);
          reject(signal!.reason);
        };
        const waiter: Waiter = {
          grant(release) {
            signal?.removeEventListener("abort", onAbort);
            resolve(release);
          },
        };
        line.add(waiter);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    },
    get held() {
      return held;
    },
    get waiting() {
      return ahead.size + queue.size;
    },
  };
}
