import { type Deferred, deferred } from "../record-file/journal.js";
import {
  type EventAppend,
  type RowChange,
  type RunResultRow,
  applyBatch,
  fitsOneStatement,
  resultRecord,
} from "./batch-sql.js";
import { GlobalOnlyWriteError } from "../global-only-write-error.js";
import type { PostgresDatabase } from "./database.js";
import { partOfSession } from "./partitions.js";

/** An escaped backslash (kept), or an escape jsonb refuses: NUL, or a surrogate (JSON.stringify escapes only lone ones). */
const JSONB_REFUSES = /\\\\|\\u(?:0000|d[89a-f][0-9a-f]{2})/g;

/**
 * JSON text PostgreSQL's jsonb accepts. It refuses the escaped NUL character and lone surrogates
 * (a string cut through an emoji by a model, a tool or a client), and one refused value would fail
 * every write of its batch, other sessions' included: each becomes U+FFFD instead.
 */
export function jsonbText(value: unknown): string {
  const text = JSON.stringify(value);
  if (!text.includes("\\u")) return text;
  return text.replace(JSONB_REFUSES, (found) => (found === "\\\\" ? found : "\\ufffd"));
}

/** One batch's writes. */
interface Batch {
  appends: EventAppend[];
  changes: RowChange[];
  results: RunResultRow[];
  /** hand-off rows (`inbound_handoff`) to delete: their ids and parts (null: a row of no session) */
  handoffs: HandoffDrop[];
}

/** A hand-off row to delete: fenced by its partition's lease (null: the writer lease). */
interface HandoffDrop {
  id: string;
  part: number | null;
}

/**
 * Commits one batch: one statement (atomic without BEGIN/COMMIT, checking a fenced database's
 * fences itself: one round trip) unless a row is removed and written again (a transaction of two).
 * Either way it is fenced by the leases of exactly the partitions its rows, appends and run results
 * belong to, the hand-off rows it deletes included (null: rows of no session, fenced by the writer
 * lease, which every fence check of the global holder carries); one stale fence refuses it whole.
 */
function commitBatch(database: PostgresDatabase, { appends, changes, results, handoffs }: Batch): Promise<void> {
  const single = fitsOneStatement(changes);
  const resultParts = results.map((row) => partOfSession(database, row.sessionKey));
  const resultsJson = jsonbText(results.map((row, i) => resultRecord(row, resultParts[i] ?? null)));
  const dropParts = handoffs.map((drop) => drop.part);
  const parts = new Set([...changes.map((c) => c.part), ...appends.map((a) => a.part), ...resultParts, ...dropParts]);
  const extras = { results: resultsJson, handoffs: handoffs.map((drop) => drop.id) };
  return database.transaction(
    (client) => applyBatch(client, appends, changes, single ? database.fence?.(parts) : undefined, extras),
    { single, fencedInside: single, parts },
  );
}

/**
 * Group commit for everything the gateway writes on its turn path: the rows of every table of the
 * state port and the events appended to transcripts. Writes made while a batch commits wait for
 * the next one, which takes them all, so N writes cost about one round trip, not N. The writes a
 * caller makes in one synchronous step always land in one batch, one transaction: that is what
 * makes `commit(fn)` all or nothing, and what puts a turn's reply in its transcript and in the
 * outbox together, and a run's end (`run_results`) with them. A write's promise settles when its batch is committed. Batches commit one
 * after another, so one transcript's events are stored in the order they were appended.
 */
function createRowWriter(database: PostgresDatabase) {
  // The changes waiting for the next batch, by "<tbl>\0<key>": only a row's last change is written.
  let waiting = new Map<string, RowChange>();
  let appends: EventAppend[] = [];
  // Run ends by run id: one statement cannot write a row twice, and the last end is the run's.
  let results = new Map<string, RunResultRow>();
  let handoffs: HandoffDrop[] = [];
  // Every write queued so far (a caller compares it around a synchronous step: did that step write?).
  let queuedWrites = 0;
  let batch: Deferred | undefined;
  let committing: Deferred | undefined;
  let running: Promise<void> | undefined;

  async function drain(): Promise<void> {
    while (batch) {
      const next: Batch = { appends, changes: [...waiting.values()], results: [...results.values()], handoffs };
      const done = batch;
      waiting = new Map();
      appends = [];
      results = new Map();
      handoffs = [];
      batch = undefined;
      committing = done;
      await commitBatch(database, next).then(done.resolve, done.reject);
    }
    committing = undefined;
    running = undefined;
  }

  /**
   * A write of no session (`part` null) on a partition owner without the global lease: refused
   * before it is queued, so it never refuses the batch of the others' writes; undefined otherwise.
   */
  function refused(part: number | null, what: () => string): Promise<void> | undefined {
    if (part !== null || database.global !== false) return undefined;
    return Promise.reject(new GlobalOnlyWriteError(what()));
  }

  function queued(): Promise<void> {
    queuedWrites++;
    batch ??= deferred();
    running ??= Promise.resolve().then(drain);
    return batch.promise;
  }

  return {
    /** Queues a change of one row (stored under partition `part`, null: none); settles when it is committed. */
    write(tbl: string, key: string, json: string | undefined, part: number | null = null): Promise<void> {
      const no = refused(part, () => `state table "${tbl}": row "${key}" belongs to no session and was not written`);
      if (no) return no;
      const id = `${tbl}\0${key}`;
      const before = waiting.get(id);
      // A row removed and written again in one batch goes last, as it does in the table's image.
      const moved = before !== undefined && (before.moved || before.json === undefined) && json !== undefined;
      if (moved) waiting.delete(id);
      waiting.set(id, { tbl, key, json, part, moved });
      return queued();
    },
    /** Queues an event appended to a transcript; settles when it is committed. */
    append(event: EventAppend): Promise<void> {
      const no = refused(event.part, () => `transcript "${event.agent}/${event.name}": an append naming no session`);
      if (no) return no;
      appends.push(event);
      return queued();
    },
    /** Queues how a run ended (`run_results`, replacing an earlier end of its id); settles when it is committed. */
    result(row: RunResultRow): Promise<void> {
      results.set(row.runId, row);
      return queued();
    },
    /**
     * Queues the delete of a hand-off row the owner took in (src/gateway/handoff-drain.ts), fenced
     * by the lease of its partition `part` (null, a row of no session: the writer lease); settles
     * when committed. Queued in the step that queued the intake's own write, it commits with that
     * write: one commit makes the intake durable and deletes the row.
     */
    dropHandoff(id: string, part: number | null = null): Promise<void> {
      const no = refused(part, () => `hand-off row ${id}: a delete naming no partition`);
      if (no) return no;
      handoffs.push({ id, part });
      return queued();
    },
    /** How many writes were queued so far: compared around a synchronous step, whether that step wrote. */
    queuedWrites: (): number => queuedWrites,
    /** Settles when the batch being filled now (the writes of the current synchronous step) is committed; rejects if it failed. */
    pending: (): Promise<void> => batch?.promise ?? Promise.resolve(),
    /** Settles when every change queued so far is committed or failed (later ones are not waited for). */
    queuedSoFar: (): Promise<void> => (batch ?? committing)?.promise.catch(() => {}) ?? Promise.resolve(),
    /** Settles when every change queued so far is committed (or failed), and nothing is being committed. */
    async idle(): Promise<void> {
      while (running) await running;
    },
  };
}

/** The group commit of one database. */
export type RowWriter = ReturnType<typeof createRowWriter>;

const writers = new WeakMap<PostgresDatabase, RowWriter>();

/**
 * The one writer of `database`: the state port and the transcripts on it share it, so the rows and
 * the transcript events written in one step commit in one transaction.
 */
export function rowWriterOf(database: PostgresDatabase): RowWriter {
  let writer = writers.get(database);
  if (!writer) {
    writer = createRowWriter(database);
    writers.set(database, writer);
  }
  return writer;
}
