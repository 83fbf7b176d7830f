// Durable run results (migration 0009, docs/scale-out.md "Durable run results"): how each run
// ended, written by the row writer in the turn's own commit (src/state/postgres/batch-sql.ts), read
// here by any gateway of the schema. The table's trigger NOTIFYs the run id on the schema's channel.
import type pg from "pg";
import { schemaChannel } from "./listen-channel.js";
import type { RunResultRow } from "../state/postgres/batch-sql.js";

/** The NOTIFY channel of `schema`'s run results (as migration 0009's trigger names it). */
export const runResultsChannel = (schema: string): string => schemaChannel("runs", schema);

/** ms since the epoch of a timestamptz column, in SQL. */
const ms = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;

/** The stored end of run `runId`, if any. */
export async function readRunResult(db: pg.Pool | pg.PoolClient, runId: string): Promise<RunResultRow | undefined> {
  const { rows } = await db.query<{
    session_key: string;
    status: string;
    text: string | null;
    error: string | null;
    queued: number;
    started: number | null;
    ended: number;
  }>(
    `SELECT session_key, status, text, error, ${ms("queued_at")} AS queued, ${ms("started_at")} AS started,
            ${ms("ended_at")} AS ended
       FROM run_results WHERE run_id = $1`,
    [runId],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    runId,
    sessionKey: row.session_key,
    status: row.status,
    ...(row.text !== null && { text: row.text }),
    ...(row.error !== null && { error: row.error }),
    queuedAt: Math.round(row.queued),
    ...(row.started !== null && { startedAt: Math.round(row.started) }),
    endedAt: Math.round(row.ended),
  };
}

/**
 * A run promised by a gateway and not ended: stored in the hand-off inbox (not set aside) for the
 * owner or, forwarded, for the partition's holder, or (`cluster.owners: "many"`) pending in an
 * inbox of the schema (a forwarded entry its holder drained: the drain writes the inbox row in the
 * commit that deletes the hand-off row, so one statement sees the run in one place or the other).
 */
export async function handedOffRun(
  db: pg.Pool | pg.PoolClient,
  runId: string,
): Promise<{ sessionKey: string; queuedAt: number } | undefined> {
  const { rows } = await db.query<{ session_key: string | null; queued: number }>(
    `SELECT coalesce(payload->>'sessionKey', payload->>'session') AS session_key, ${ms("created_at")} AS queued
       FROM inbound_handoff WHERE run_id = $1 AND set_aside_at IS NULL
     UNION ALL
     SELECT coalesce(value->>'sessionKey', value#>>'{startedTurn,sessionKey}', value->>'session'),
            (value->>'receivedAt')::float8
       FROM state_rows WHERE tbl = 'inbox' AND value->>'status' = 'pending' AND value->>'runId' = $1
     LIMIT 1`,
    [runId],
  );
  const row = rows[0];
  return row && { sessionKey: row.session_key ?? "", queuedAt: Math.round(row.queued) };
}

/**
 * What the schema says of a run's announce (`<runId>:announce` in an outbox) while its run may
 * still be pending in an inbox: the announce is handed over after the run's end and before its
 * inbox entry is done, so once `pending` is false `announced` is final.
 */
export async function announceOfRun(
  db: pg.Pool | pg.PoolClient,
  runId: string,
): Promise<{ pending: boolean; announced: boolean }> {
  const { rows } = await db.query<{ pending: boolean; announced: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM state_rows
                     WHERE tbl = 'inbox' AND value->>'status' = 'pending' AND value->>'runId' = $1) AS pending,
            EXISTS (SELECT 1 FROM state_rows WHERE tbl = 'outbox' AND key = $1 || ':announce') AS announced`,
    [runId],
  );
  return rows[0] ?? { pending: false, announced: false };
}

/** Deletes the run results that ended before `cutoffMs` (ms since the epoch); returns how many. */
export async function pruneRunResults(client: pg.PoolClient, cutoffMs: number): Promise<number> {
  const { rowCount } = await client.query("DELETE FROM run_results WHERE ended_at < to_timestamp($1 / 1000.0)", [
    cutoffMs,
  ]);
  return rowCount ?? 0;
}
