// How long each step of a gateway's start took, logged with "gateway listening": on PostgreSQL the
// steps after the writer lease are a failover's outage (docs/scale-out.md, "Measured").

/** Named steps of one start, each timed from the end of the one before. */
export interface StartupSteps {
  /** Ends the step running now: `step` is how long it took since the previous mark (or since the start). */
  mark(step: string): void;
  /** Every step's ms, in the order they ended (rounded to 0.1 ms). */
  report(): Record<string, number>;
}

/** A step timer starting now, on `now` (default the monotonic clock). */
export function createStartupSteps(now: () => number = () => performance.now()): StartupSteps {
  const steps: Record<string, number> = {};
  let last = now();
  return {
    mark(step) {
      const at = now();
      steps[step] = Math.round((steps[step] ?? 0) * 10 + (at - last) * 10) / 10;
      last = at;
    },
    report: () => ({ ...steps }),
  };
}
