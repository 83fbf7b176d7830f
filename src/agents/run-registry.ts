import { RUN_ENDS, type RunEnd } from "./run-end.js";

/** Where a run is in its life: waiting, running, or how it ended. */
export type RunStatus = "queued" | "running" | RunEnd;

/** One agent run, as `agent.wait` and `/status` see it. */
export interface RunRecord {
  runId: string;
  sessionKey: string;
  status: RunStatus;
  queuedAt: number;
  startedAt?: number;
  endedAt?: number;
  /** the run's own final text (not the transcript's last message) */
  text?: string;
  error?: string;
}

const FINAL: ReadonlySet<RunStatus> = new Set(RUN_ENDS);

/** True once a run cannot change any more: it ended. */
export function isFinalStatus(status: RunStatus): status is RunEnd {
  return FINAL.has(status);
}

/** Runs by id: status, timestamps, final text, abort; finished runs are kept for `retentionMs`. */
export type RunRegistry = ReturnType<typeof createRunRegistry>;

/**
 * Ended runs in the order they ended, so pruning looks only at the oldest ones (never at every
 * run); `prune` drops those that ended more than `retentionMs` ago from `runs`.
 */
function createEndedLog(runs: Map<string, RunRecord>, now: () => number, retentionMs: number) {
  let ended: string[] = [];
  let oldest = 0; // index in `ended` of the first run not pruned yet
  return {
    add: (runId: string) => ended.push(runId),
    prune(): void {
      const cutoff = now() - retentionMs;
      while (oldest < ended.length) {
        const run = runs.get(ended[oldest]!);
        // A clock set back can end runs out of order: pruning stops at the first one still kept.
        // A run id created again since is not ended (or ended later, and listed again further on).
        if (run?.endedAt !== undefined) {
          if (run.endedAt >= cutoff) break;
          runs.delete(run.runId);
        }
        oldest++;
      }
      if (oldest > 1024 && oldest * 2 > ended.length) {
        ended = ended.slice(oldest);
        oldest = 0;
      }
    },
  };
}

/** Who waits for which run to end: `wait` resolves with the final record, or undefined after `timeoutMs`. */
function createRunWaiters() {
  const waiters = new Map<string, Array<(run: RunRecord) => void>>();
  return {
    ended(run: RunRecord): void {
      for (const resolve of waiters.get(run.runId) ?? []) resolve({ ...run });
      waiters.delete(run.runId);
    },
    wait(runId: string, timeoutMs: number): Promise<RunRecord | undefined> {
      return new Promise((resolve) => {
        const list = waiters.get(runId) ?? [];
        waiters.set(runId, list);
        const timer = setTimeout(() => {
          list.splice(list.indexOf(done), 1);
          resolve(undefined);
        }, timeoutMs);
        const done = (final: RunRecord) => {
          clearTimeout(timer);
          resolve(final);
        };
        list.push(done);
      });
    },
  };
}

/** Options of `createRunRegistry`. */
type RunRegistryDeps = { now?: () => number; retentionMs?: number; onChange?: (run: RunRecord) => void };

/** The registry's state: runs by id, the abort controllers of the live ones, the ended log, the waiters. */
interface Runs {
  deps: RunRegistryDeps;
  now: () => number;
  runs: Map<string, RunRecord>;
  controllers: Map<string, AbortController>;
  log: ReturnType<typeof createEndedLog>;
  waiters: ReturnType<typeof createRunWaiters>;
}

/** Applies a change to a run not yet ended; when it ends, logs it, drops its controller and wakes its waiters. */
function updateRun(r: Runs, runId: string, change: Partial<RunRecord>): RunRecord | undefined {
  const run = r.runs.get(runId);
  if (!run || isFinalStatus(run.status)) return run;
  Object.assign(run, change);
  r.deps.onChange?.({ ...run });
  if (isFinalStatus(run.status)) {
    r.log.add(runId);
    r.controllers.delete(runId);
    r.waiters.ended(run);
  }
  return run;
}

/** Registers a queued run (pruning old ended ones first); its AbortController aborts it whether queued or running. */
function createRun(r: Runs, runId: string, sessionKey: string): { run: RunRecord; signal: AbortSignal } {
  r.log.prune();
  const controller = new AbortController();
  const run: RunRecord = { runId, sessionKey, status: "queued", queuedAt: r.now() };
  r.runs.set(runId, run);
  r.controllers.set(runId, controller);
  r.deps.onChange?.({ ...run });
  return { run: { ...run }, signal: controller.signal };
}

/** Aborts a queued or running run; false when it is unknown or already over. */
function abortRun(r: Runs, runId: string, reason: string): boolean {
  const controller = r.controllers.get(runId);
  if (!controller) return false;
  controller.abort(new Error(reason));
  return true;
}

/** Waits for a run's end: its final record, undefined on timeout or for an unknown run. */
function waitRun(r: Runs, runId: string, timeoutMs: number): Promise<RunRecord | undefined> {
  const run = r.runs.get(runId);
  if (!run) return Promise.resolve(undefined);
  if (isFinalStatus(run.status)) return Promise.resolve({ ...run });
  return r.waiters.wait(runId, timeoutMs);
}

/** Copies of the queued or running runs, of `sessionKey` or of every session. */
function activeRuns(r: Runs, sessionKey?: string): RunRecord[] {
  return [...r.runs.values()]
    .filter((run) => !isFinalStatus(run.status) && (sessionKey === undefined || run.sessionKey === sessionKey))
    .map((run) => ({ ...run }));
}

/** Copies of the `limit` most recently queued runs, newest first. */
function recentRuns(r: Runs, limit: number): RunRecord[] {
  return [...r.runs.values()]
    .sort((a, b) => b.queuedAt - a.queuedAt)
    .slice(0, limit)
    .map((run) => ({ ...run }));
}

/** Creates the registry; `onChange` sees every transition (for gateway events). */
export function createRunRegistry(deps: RunRegistryDeps = {}) {
  const now = deps.now ?? Date.now;
  const runs = new Map<string, RunRecord>();
  const log = createEndedLog(runs, now, deps.retentionMs ?? 10 * 60_000);
  const r: Runs = { deps, now, runs, controllers: new Map(), log, waiters: createRunWaiters() };
  return {
    /** Registers a queued run; its AbortController aborts it whether queued or running. */
    create: (runId: string, sessionKey: string): { run: RunRecord; signal: AbortSignal } =>
      createRun(r, runId, sessionKey),
    start: (runId: string): void => void updateRun(r, runId, { status: "running", startedAt: now() }),
    finish(
      runId: string,
      result: { status: Exclude<RunStatus, "queued" | "running">; text?: string; error?: string },
    ): void {
      updateRun(r, runId, { ...result, endedAt: now() });
    },
    get(runId: string): RunRecord | undefined {
      const run = runs.get(runId);
      return run && { ...run };
    },
    /** Aborts a queued or running run; false when it is unknown or already over. */
    abort: (runId: string, reason = "aborted"): boolean => abortRun(r, runId, reason),
    /** Runs of `sessionKey` that are queued or running. */
    active: (sessionKey?: string): RunRecord[] => activeRuns(r, sessionKey),
    /** Recent runs, newest first. */
    recent: (limit = 20): RunRecord[] => recentRuns(r, limit),
    /**
     * Waits up to `timeoutMs` for the run to end. Resolves with the final record, or with
     * `undefined` on timeout (the run goes on). Unknown run: undefined at once.
     */
    wait: (runId: string, timeoutMs: number): Promise<RunRecord | undefined> => waitRun(r, runId, timeoutMs),
  };
}
