import { type GateTimers, nodeTimers } from "../delivery/gate-timer.js";
import { BACKGROUND_RETRY, retryDelay } from "../delivery/retry-delay.js";
import type { Logger } from "../logger.js";
import { LeftForReplay } from "../agents/stored-turn.js";
import { InboxWriteError } from "./inbox.js";

/**
 * Retries writes that failed to store (`InboxWriteError`: the database away, a full disk) with
 * backoff for as long as the gateway runs; `stop` ends every backoff at once with `LeftForReplay`.
 */
export function createWriteRetry(deps: { logger: Logger; timers?: GateTimers | undefined }) {
  const timers = deps.timers ?? nodeTimers;
  let stopped = false;
  const waiting = new Set<() => void>();
  const backoff = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = timers.setTimeout(() => wake(), ms);
      const wake = () => {
        timers.clearTimeout(timer);
        waiting.delete(wake);
        resolve();
      };
      waiting.add(wake);
    });
  return {
    /** Runs `write` until it stores; any error other than `InboxWriteError` is the caller's. */
    async untilStored<T>(write: () => Promise<T>, what: Record<string, unknown>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await write();
        } catch (err) {
          if (!(err instanceof InboxWriteError)) throw err;
          if (stopped) throw new LeftForReplay(err);
          const retryInMs = retryDelay(attempt, BACKGROUND_RETRY);
          deps.logger.warn({ ...what, err, attempt, retryInMs }, "storing a turn's next write failed; retrying");
          await backoff(retryInMs);
        }
      }
    },
    /** A stop began: every backoff ends now and its write is left to the next start. */
    stop(): void {
      stopped = true;
      for (const wake of [...waiting]) wake();
    },
  };
}
