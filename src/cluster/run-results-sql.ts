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

/** A run promised by a gateway that stored its turn in the hand-off inbox (not set aside): the owner (or, forwarded, the partition's holder) will run it; a forwarded message names its routed `session`. */
export async function handedOffRun(
  db: pg.Pool | pg.PoolClient,
  runId: string,
): Promise<{ sessionKey: string; queuedAt: number } | undefined> {
  const { rows } = await db.query<{ session_key: string | null; queued: number }>(
    `SELECT coalesce(payload->>'sessionKey', payload->>'session') AS session_key, ${ms("created_at")} AS queued
       FROM inbound_handoff WHERE run_id = $1 AND set_aside_at IS NULL LIMIT 1`,
    [runId],
  );
  const row = rows[0];
  return row && { sessionKey: row.session_key ?? "", queuedAt: Math.round(row.queued) };
}

/** Deletes the run results that ended before `cutoffMs` (ms since the epoch); returns how many. */
export async function pruneRunResults(client: pg.PoolClient, cutoffMs: number): Promise<number> {
  const { rowCount } = await client.query("DELETE FROM run_results WHERE ended_at < to_timestamp($1 / 1000.0)", [
    cutoffMs,
  ]);
  return rowCount ?? 0;
}
