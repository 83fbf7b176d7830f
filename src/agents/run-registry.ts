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

/** A run's end as stored beyond this process: its status as read back (checked before it is believed). */
type StoredRunEnd = Omit<RunRecord, "status"> & { status: string };

/**
 * Where run ends are kept beyond this process (PostgreSQL's `run_results`, src/cluster/run-results.ts),
 * so a gateway that did not run a turn (the one that took the schema over) answers for it.
 */
export interface DurableRuns {
  /** Queues a run's end into the commit being filled now (the turn's own); settles when it is committed. */
  record(run: RunRecord): Promise<void>;
  get(runId: string): Promise<StoredRunEnd | undefined>;
  /** A run stored to run (an inbox holds it) that has not ended. */
  pending(runId: string): Promise<{ sessionKey: string; queuedAt: number } | undefined>;
  /** Waits up to `timeoutMs` for a run's end to be stored; undefined on timeout. */
  wait(runId: string, timeoutMs: number): Promise<StoredRunEnd | undefined>;
}

/** Options of `createRunRegistry`. */
type RunRegistryDeps = {
  now?: () => number;
  retentionMs?: number;
  onChange?: (run: RunRecord) => void;
  /** absent: runs are known in this process's memory only (local files: one gateway) */
  durable?: DurableRuns;
  /**
   * Without a durable record: a run this process's inbox holds pending but has not registered yet
   * (a replay still starting after a restart). It is found as queued, and a wait waits for its end.
   */
  pendingHere?: (runId: string) => { sessionKey: string; queuedAt: number } | undefined;
};

/** The registry's state: runs by id, the abort controllers of the live ones, the ended log, the waiters. */
interface Runs {
  deps: RunRegistryDeps;
  now: () => number;
  runs: Map<string, RunRecord>;
  controllers: Map<string, AbortController>;
  log: ReturnType<typeof createEndedLog>;
  waiters: ReturnType<typeof createRunWaiters>;
  /** runs whose end is already queued for the durable record (by `recordEnd`), with that end's status and time */
  recorded: Map<string, { status: RunStatus; endedAt: number | undefined }>;
}

/**
 * Queues a run's end for the durable record, unless the same end is queued already. A failed write
 * fails the batch it rode in, whose turn ends as failed and records that end instead.
 */
function recordDurably(r: Runs, run: RunRecord): void {
  if (!r.deps.durable || r.recorded.get(run.runId)?.status === run.status) return;
  r.recorded.set(run.runId, { status: run.status, endedAt: run.endedAt });
  r.deps.durable.record({ ...run }).catch(() => undefined);
}

/** Applies a change to a run not yet ended; when it ends, logs it, drops its controller, records it and wakes its waiters. */
function updateRun(r: Runs, runId: string, change: Partial<RunRecord>): RunRecord | undefined {
  const run = r.runs.get(runId);
  if (!run || isFinalStatus(run.status)) return run;
  Object.assign(run, change);
  r.deps.onChange?.({ ...run });
  if (isFinalStatus(run.status)) {
    r.log.add(runId);
    r.controllers.delete(runId);
    recordDurably(r, run);
    r.recorded.delete(runId);
    r.waiters.ended(run);
  }
  return run;
}

/** A stored end as a record: a status this code does not know reads as an error. */
function endOf(stored: StoredRunEnd): RunRecord {
  return { ...stored, status: isFinalStatus(stored.status as RunStatus) ? (stored.status as RunStatus) : "error" };
}

/**
 * A run wherever it is known: this process's memory, else its stored end (a run that ended on
 * another gateway, e.g. before a takeover), else a queued record when an inbox holds it to run.
 */
async function findRun(r: Runs, runId: string): Promise<RunRecord | undefined> {
  const here = r.runs.get(runId);
  if (here) return { ...here };
  if (!r.deps.durable) {
    const waiting = r.deps.pendingHere?.(runId);
    return waiting && { runId, status: "queued", ...waiting };
  }
  const stored = await r.deps.durable.get(runId);
  if (stored) return endOf(stored);
  const pending = await r.deps.durable.pending(runId);
  if (pending) return { runId, status: "queued", ...pending };
  // Its end read before it was pending no more: it may have ended between the two reads.
  const ended = await r.deps.durable.get(runId);
  return ended && endOf(ended);
}

/** Waits for a run's end: in memory when this process runs it, else its stored end (woken by NOTIFY). */
async function waitForRun(r: Runs, runId: string, timeoutMs: number): Promise<RunRecord | undefined> {
  if (r.runs.has(runId) || !r.deps.durable) return waitRun(r, runId, timeoutMs);
  const stored = await r.deps.durable.wait(runId, timeoutMs);
  return stored && endOf(stored);
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
  if (!run) return r.deps.pendingHere?.(runId) ? r.waiters.wait(runId, timeoutMs) : Promise.resolve(undefined);
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
  const r: Runs = { deps, now, runs, controllers: new Map(), log, waiters: createRunWaiters(), recorded: new Map() };
  return {
    /** Registers a queued run; its AbortController aborts it whether queued or running. */
    create: (runId: string, sessionKey: string): { run: RunRecord; signal: AbortSignal } =>
      createRun(r, runId, sessionKey),
    start: (runId: string): void => void updateRun(r, runId, { status: "running", startedAt: now() }),
    finish(
      runId: string,
      result: { status: Exclude<RunStatus, "queued" | "running">; text?: string; error?: string },
    ): void {
      // The end's time as recorded (`recordEnd`), so memory and the durable record answer the same.
      const recorded = r.recorded.get(runId);
      updateRun(r, runId, { ...result, endedAt: (recorded?.status === result.status && recorded.endedAt) || now() });
    },
    /**
     * Queues the end of a run that is ending now into the durable record, in the caller's
     * synchronous step (the turn's commit), before `finish` tells this process.
     */
    recordEnd(runId: string, result: { status: RunEnd; text?: string; error?: string }): void {
      const run = runs.get(runId);
      if (run && !isFinalStatus(run.status)) recordDurably(r, { ...run, ...result, endedAt: now() });
    },
    /** The run as this process knows it (memory only; see `find`). */
    get(runId: string): RunRecord | undefined {
      const run = runs.get(runId);
      return run && { ...run };
    },
    /** The run wherever it is known: memory, else its durable record, else queued when an inbox holds it. */
    find: (runId: string): Promise<RunRecord | undefined> => findRun(r, runId),
    /** Waits up to `timeoutMs` for a run's end, also one this process does not run (its durable record). */
    waitFor: (runId: string, timeoutMs: number): Promise<RunRecord | undefined> => waitForRun(r, runId, timeoutMs),
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
