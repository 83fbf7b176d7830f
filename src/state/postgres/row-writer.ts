import type pg from "pg";
import { type Deferred, deferred } from "../record-file/journal.js";
import type { PostgresDatabase } from "./database.js";

/** One change of a row: its new value (JSON text), or its removal. */
interface RowChange {
  tbl: string;
  key: string;
  /** JSON text; undefined removes the row */
  json: string | undefined;
  /** the row was removed earlier in the same batch, so its new version goes last (as in a Map) */
  moved: boolean;
}

/**
 * JSON text PostgreSQL's jsonb accepts: it refuses the escaped NUL character (`\u0000`) in strings,
 * so a NUL becomes U+FFFD instead of failing the write forever.
 */
export function jsonbText(value: unknown): string {
  return JSON.stringify(value).replaceAll("\\u0000", "\\ufffd");
}

/** Applies a batch's changes in two statements (whatever their number): removals, then upserts in order. */
async function applyChanges(client: pg.PoolClient, changes: RowChange[]): Promise<void> {
  const removed = changes.filter((change) => change.json === undefined || change.moved);
  if (removed.length > 0)
    await client.query(
      "DELETE FROM state_rows r USING unnest($1::text[], $2::text[]) AS d(tbl, key) WHERE r.tbl = d.tbl AND r.key = d.key",
      [removed.map((change) => change.tbl), removed.map((change) => change.key)],
    );
  const written = changes.filter((change) => change.json !== undefined);
  if (written.length > 0)
    // A replaced row keeps its `ord` (its place); a new one takes the next, in the batch's order.
    await client.query(
      `INSERT INTO state_rows (tbl, key, value)
       SELECT tbl, key, value FROM unnest($1::text[], $2::text[], $3::jsonb[]) WITH ORDINALITY AS w(tbl, key, value, n) ORDER BY n
       ON CONFLICT (tbl, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
      [written.map((change) => change.tbl), written.map((change) => change.key), written.map((change) => change.json)],
    );
}

/** Commits one batch: only upserts are one statement, atomic without BEGIN/COMMIT (two round trips fewer). */
function commitBatch(database: PostgresDatabase, changes: RowChange[]): Promise<void> {
  const single = changes.every((change) => change.json !== undefined && !change.moved);
  return database.transaction((client) => applyChanges(client, changes), { single });
}

/**
 * Group commit for the rows of every table of a port: writes made while a transaction runs wait
 * for the next one, which takes them all, so N writes cost about one round trip, not N. The writes
 * a caller makes in one synchronous step always land in one batch (one transaction): that is what
 * makes `commit(fn)` all or nothing. A write's promise settles when its batch is committed.
 */
export function createRowWriter(database: PostgresDatabase) {
  // The changes waiting for the next batch, by "<tbl>\0<key>": only a row's last change is written.
  let waiting = new Map<string, RowChange>();
  let batch: Deferred | undefined;
  let running: Promise<void> | undefined;

  async function drain(): Promise<void> {
    while (batch) {
      const changes = [...waiting.values()];
      const done = batch;
      waiting = new Map();
      batch = undefined;
      await commitBatch(database, changes).then(done.resolve, done.reject);
    }
    running = undefined;
  }

  return {
    /** Queues a change of one row; settles when it is committed. */
    write(tbl: string, key: string, json: string | undefined): Promise<void> {
      const id = `${tbl}\0${key}`;
      const before = waiting.get(id);
      // A row removed and written again in one batch goes last, as it does in the table's image.
      const moved = before !== undefined && (before.moved || before.json === undefined) && json !== undefined;
      if (moved) waiting.delete(id);
      waiting.set(id, { tbl, key, json, moved });
      batch ??= deferred();
      running ??= Promise.resolve().then(drain);
      return batch.promise;
    },
    /** Settles when the batch being filled now (the writes of the current synchronous step) is committed; rejects if it failed. */
    pending: (): Promise<void> => batch?.promise ?? Promise.resolve(),
    /** Settles when every change queued so far is committed (or failed). */
    async idle(): Promise<void> {
      while (running) await running;
    },
  };
}
