// The gateway's side of the durable run results (./run-results-sql.ts): a run's end is queued into
// the row writer's batch that is being filled (the turn's own commit: no round trip of its own),
// read back by run id, and waited for on a LISTEN connection opened at the first wait.
import type { Logger } from "../logger.js";
import type { RunResultRow } from "../state/postgres/batch-sql.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import { rowWriterOf } from "../state/postgres/row-writer.js";
import { listenChannel } from "./listen-channel.js";
import { handedOffRun, pruneRunResults, readRunResult, runResultsChannel } from "./run-results-sql.js";

/** A run stored to run and not ended: its session and when it was received. */
export interface PendingRun {
  sessionKey: string;
  queuedAt: number;
}

/** What {@link createRunResults} needs. */
export interface RunResultsDeps {
  /** the gateway's database, whose row writer carries the turn's commit */
  database: PostgresDatabase;
  logger: Logger;
  /** a run this gateway's own inbox holds and will run (`agent.wait` waits for it) */
  pendingHere?: (runId: string) => PendingRun | undefined;
  now?: () => number;
  /** prunes run at most this often, whatever asks; default one hour (the inbox's own pace) */
  pruneEveryMs?: number;
  /** how much older than the oldest handled key kept an end must be to go; default {@link END_BEFORE_DONE_MS} */
  endBeforeDoneMs?: number;
}

/**
 * A run ends before its inbox entry is marked done: by a few ms for a turn, by the announce step
 * for a spawn (its entry is done once the child's announce is handed over). So an end is deleted
 * only once it is this much older than the oldest handled key the inbox keeps; deleting at that
 * key's own time lost the end of the one run whose key it was (found by test/e2e/cron-crash.test.ts).
 */
export const END_BEFORE_DONE_MS = 24 * 3_600_000;

/** Who waits for which run's stored end: each re-reads the row when woken. */
function createWaiters() {
  const waiters = new Map<string, Set<() => void>>();
  // Each wait's end, so a close answers every wait at once (undefined: a timeout) instead of at its timer.
  const ends = new Set<() => void>();
  return {
    ends,
    add(runId: string, check: () => void): () => void {
      const set = waiters.get(runId) ?? new Set();
      waiters.set(runId, set);
      set.add(check);
      return () => {
        set.delete(check);
        if (set.size === 0 && waiters.get(runId) === set) waiters.delete(runId);
      };
    },
    /** a NOTIFY of `runId`; undefined: the connection (re)listens, so every waiter looks again */
    wake(runId: string | undefined): void {
      const woken = runId === undefined ? [...waiters.values()] : [waiters.get(runId) ?? new Set()];
      for (const set of woken) for (const check of [...set]) check();
    },
  };
}

/** Waits up to `timeoutMs` for `runId`'s row: registered before the first read, so a NOTIFY between the two is not missed. */
function waitForRow(
  deps: RunResultsDeps,
  waiters: ReturnType<typeof createWaiters>,
  runId: string,
  timeoutMs: number,
): Promise<RunResultRow | undefined> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (row: RunResultRow | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      remove();
      resolve(row);
    };
    const check = () => {
      readRunResult(deps.database.pool, runId).then(
        (row) => row && finish(row),
        (err: unknown) => deps.logger.warn({ err, runId }, "run result not read; read again at its NOTIFY"),
      );
    };
    const ended = () => finish(undefined);
    const timer = setTimeout(ended, timeoutMs);
    const removeCheck = waiters.add(runId, check);
    waiters.ends.add(ended);
    const remove = () => {
      removeCheck();
      waiters.ends.delete(ended);
    };
    check();
  });
}

/** The schema's run results for this gateway (PostgreSQL only: on local files the run registry in memory is the record). */
export function createRunResults(deps: RunResultsDeps) {
  const { database, logger } = deps;
  const now = deps.now ?? Date.now;
  const waiters = createWaiters();
  const listener = listenChannel({
    pool: database.pool,
    channel: runResultsChannel(database.schema),
    logger,
    onNotify: (runId) => waiters.wake(runId),
    warning: "run results not listened to; agent.wait for a run of another gateway answers at its timeout",
  });
  let listening: Promise<void> | undefined;
  let closed = false;
  let prunedAt = Number.NEGATIVE_INFINITY;
  let pruning: Promise<void> = Promise.resolve();
  return {
    /** Queues a run's end into the batch being filled now (the turn's commit); settles when it is committed. */
    record: (row: RunResultRow): Promise<void> => rowWriterOf(database).result(row),
    /** The stored end of a run, if any. */
    get: (runId: string): Promise<RunResultRow | undefined> => readRunResult(database.pool, runId),
    /** A run not ended that will run: in this gateway's inbox, or stored in the hand-off inbox for the owner. */
    async pending(runId: string): Promise<PendingRun | undefined> {
      return deps.pendingHere?.(runId) ?? (await handedOffRun(database.pool, runId));
    },
    /** Waits up to `timeoutMs` for a run's end to be stored (woken by its NOTIFY); undefined on timeout. */
    async wait(runId: string, timeoutMs: number): Promise<RunResultRow | undefined> {
      listening ??= listener.open();
      await listening;
      return closed ? undefined : waitForRow(deps, waiters, runId, timeoutMs);
    },
    /** Deletes the ends older than `keptFromMs` (the oldest handled key the inbox keeps) by `endBeforeDoneMs`, at most once every `pruneEveryMs`. */
    prune(keptFromMs: number): void {
      // A sweep of every session's rows, fenced by the writer lease: the global holder's.
      if (database.global === false) return;
      if (now() - prunedAt < (deps.pruneEveryMs ?? 3_600_000)) return;
      prunedAt = now();
      const cutoffMs = keptFromMs - (deps.endBeforeDoneMs ?? END_BEFORE_DONE_MS);
      pruning = database
        .transaction((client) => pruneRunResults(client, cutoffMs))
        .then(
          (deleted) => void (deleted > 0 && logger.debug({ deleted }, "pruned old run results")),
          (err: unknown) => logger.warn({ err }, "old run results not pruned; tried again in an hour"),
        );
    },
    /** Stops listening and answers every wait (as timed out); waits for a prune in flight. */
    async close(): Promise<void> {
      closed = true;
      await listener.close();
      for (const end of [...waiters.ends]) end();
      await pruning;
    },
  };
}
