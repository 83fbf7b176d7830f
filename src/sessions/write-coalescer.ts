interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Turns many write requests into few writes: a request made while a write runs is served by the
 * next write, which starts when the current one ends. Each request settles once a write that
 * started after it has finished, so an acknowledged change is on disk.
 */
export class WriteCoalescer {
  private waiting: Waiter[] = [];
  private running: Promise<void> | undefined;

  constructor(private readonly write: () => Promise<void>) {}

  /** Schedules a write that includes every change made before this call. */
  request(): Promise<void> {
    const done = new Promise<void>((resolve, reject) => this.waiting.push({ resolve, reject }));
    if (!this.running) this.running = this.drain();
    return done;
  }

  /** Settles when no write is pending or running. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    // Let the current burst of synchronous changes land before the first write.
    await Promise.resolve();
    while (this.waiting.length > 0) {
      const batch = this.waiting;
      this.waiting = [];
      try {
        await this.write();
        for (const waiter of batch) waiter.resolve();
      } catch (err) {
        for (const waiter of batch) waiter.reject(err);
      }
    }
    this.running = undefined;
  }
}
