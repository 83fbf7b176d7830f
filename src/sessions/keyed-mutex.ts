/** Runs async tasks one at a time per key, in call order; tasks on different keys run concurrently. */
export interface KeyedMutex {
  /** Runs `task` after every task queued earlier on `key` has settled; resolves or rejects with it. */
  run<T>(key: string, task: () => Promise<T> | T): Promise<T>;
  /** How many keys have a task queued or running (0 when idle; idle keys are forgotten). */
  readonly size: number;
}

/** A keyed mutex: one promise chain per key, dropped as soon as the key is idle. */
export function createKeyedMutex(): KeyedMutex {
  const tails = new Map<string, Promise<void>>();
  return {
    run<T>(key: string, task: () => Promise<T> | T): Promise<T> {
      const previous = tails.get(key) ?? Promise.resolve();
      const result = previous.then(task);
      // The chain must never reject, or one failed task would fail every later one.
      const tail = result.then(
        () => undefined,
        () => undefined,
      );
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
    get size() {
      return tails.size;
    },
  };
}
