/** A queued task was removed by {@link Lanes.clear} before it ran. */
export class LaneClearedError extends Error {
  constructor(readonly key: string) {
    super(`queued work for ${key} was cleared`);
    this.name = "LaneClearedError";
  }
}

interface Job {
  task: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

interface Lane {
  queue: Job[];
  running: boolean;
  drained?: Promise<void>;
}

/** Per-session FIFO queues with one runner each: work that arrives during a run waits, nothing is dropped. */
export type Lanes = ReturnType<typeof createLanes>;

/** Creates the lanes; each key (a session key) runs its tasks one at a time, in arrival order. */
export function createLanes() {
  const lanes = new Map<string, Lane>();

  async function drain(key: string, lane: Lane): Promise<void> {
    lane.running = true;
    while (lane.queue.length > 0) {
      const job = lane.queue.shift()!;
      try {
        job.resolve(await job.task());
      } catch (err) {
        job.reject(err);
      }
    }
    lane.running = false;
    lanes.delete(key);
  }

  return {
    /** Runs `task` after everything queued before it on `key`; settles with its result. */
    run<T>(key: string, task: () => Promise<T>): Promise<T> {
      let lane = lanes.get(key);
      if (!lane) {
        lane = { queue: [], running: false };
        lanes.set(key, lane);
      }
      const done = new Promise<T>((resolve, reject) =>
        lane!.queue.push({ task, resolve: resolve as (v: unknown) => void, reject }),
      );
      if (!lane.running) lane.drained = drain(key, lane);
      return done;
    },

    /** Drops the tasks waiting on `key` (not the running one); returns how many were dropped. */
    clear(key: string): number {
      const lane = lanes.get(key);
      if (!lane) return 0;
      const dropped = lane.queue.splice(0);
      for (const job of dropped) job.reject(new LaneClearedError(key));
      return dropped.length;
    },

    /** Tasks waiting (not running) on `key`. */
    queued(key: string): number {
      return lanes.get(key)?.queue.length ?? 0;
    },

    /** True while a task of `key` runs. */
    busy(key: string): boolean {
      return lanes.get(key)?.running ?? false;
    },

    /** Every lane with work: key, running, queued. */
    stats(): Array<{ key: string; running: boolean; queued: number }> {
      return [...lanes].map(([key, lane]) => ({ key, running: lane.running, queued: lane.queue.length }));
    },

    /** Settles when every lane is empty (work queued meanwhile is waited for too). */
    async idle(): Promise<void> {
      while (lanes.size > 0) await Promise.all([...lanes.values()].map((lane) => lane.drained));
    },
  };
}
