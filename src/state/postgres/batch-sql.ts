import type pg from "pg";
import type { CarriedFence } from "./database.js";

/** One change of a row of `state_rows`: its new value (JSON text), or its removal. */
export interface RowChange {
  tbl: string;
  key: string;
  /** JSON text; undefined removes the row */
  json: string | undefined;
  /** the partition of the row's session (migration 0008); null: it belongs to no session */
  part: number | null;
  /** the row was removed earlier in the same batch, so its new version goes last (as in a Map) */
  moved: boolean;
}

/** One event appended to a transcript (creating it with `header` when it does not exist yet). */
export interface EventAppend {
  agent: string;
  /** the transcript id */
  name: string;
  /** the transcript's header (JSON text), used when the append creates it */
  header: string;
  /** a fresh id: a batch retried after a lost COMMIT finds it as the transcript's `last_eid` and appends nothing */
  eid: string;
  bytes: number;
  /** ms since the epoch */
  at: number;
  tool: boolean;
  /** the message (JSON text) */
  json: string;
  /** the partition of the session appending: the transcript takes the latest appender's (a renamed session's key moves it); null: keeps its part */
  part: number | null;
}

/** How a run ended, written to `run_results` (migration 0009) in the batch that carries the turn's end. */
export interface RunResultRow {
  runId: string;
  sessionKey: string;
  status: string;
  text?: string | undefined;
  error?: string | undefined;
  /** ms since the epoch */
  queuedAt: number;
  startedAt?: number | undefined;
  endedAt: number;
}

/**
 * Transcript appends, in order: each transcript of the batch is created or has its sequence
 * bumped by its number of events (one upsert per transcript, under its row lock), and its events
 * take the numbers before the new `last_seq`, in the batch's order. A transcript whose `last_eid`
 * is already the batch's last event id for it (the batch is a retry of one that committed)
 * returns no row, so its events are not inserted twice.
 */
const APPENDS = `
a AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::uuid[], $5::bigint[], $6::float8[], $7::boolean[], $8::jsonb[],
    $18::smallint[]) WITH ORDINALITY AS a(agent, name, header, eid, bytes, at, tool, message, part, n)
),
g AS (
  SELECT agent, name, count(*) AS k, sum(bytes) AS bytes, max(at) AS at,
    (array_agg(header ORDER BY n))[1] AS header, (array_agg(eid ORDER BY n DESC))[1] AS eid,
    (array_agg(part ORDER BY n DESC) FILTER (WHERE part IS NOT NULL))[1] AS part
  FROM a GROUP BY agent, name
),
t AS (
  INSERT INTO transcripts AS t (agent, name, header, last_seq, last_eid, bytes, updated_at, part)
  SELECT agent, name, header, k, eid, bytes, to_timestamp(at / 1000.0), part FROM g ORDER BY agent, name
  ON CONFLICT (agent, name) DO UPDATE
    SET last_seq = t.last_seq + EXCLUDED.last_seq, last_eid = EXCLUDED.last_eid, bytes = t.bytes + EXCLUDED.bytes,
        updated_at = EXCLUDED.updated_at, part = coalesce(EXCLUDED.part, t.part)
    WHERE t.last_eid IS DISTINCT FROM EXCLUDED.last_eid
  RETURNING tid, agent, name, last_seq
),
e AS (
  INSERT INTO transcript_events (tid, seq, tool, message)
  SELECT t.tid, t.last_seq - g.k + row_number() OVER (PARTITION BY a.agent, a.name ORDER BY a.n), a.tool, a.message
  FROM a JOIN g USING (agent, name) JOIN t USING (agent, name)
)`;

const DELETES = `
d AS (
  DELETE FROM state_rows r USING unnest($9::text[], $10::text[]) AS d(tbl, key) WHERE r.tbl = d.tbl AND r.key = d.key
)`;

// Hand-off rows the owner took in ($20, docs/scale-out.md "The owner drains it"): deleted in the
// commit that stores their intake (the inbox rows of this same batch), so no crash falls between.
const HANDOFFS = `
h AS (
  DELETE FROM inbound_handoff WHERE id = ANY($20::bigint[])
)`;

// Run results ($19: a JSON array, so the texts pass through jsonbText like every other value): a
// run ended again (a re-run under its id) replaces its row; the table's trigger NOTIFYs each one.
const RESULTS = `
r AS (
  INSERT INTO run_results AS r (run_id, session_key, status, text, error, queued_at, started_at, ended_at, part)
  SELECT run_id, session_key, status, text, error, to_timestamp(queued / 1000.0), to_timestamp(started / 1000.0),
    to_timestamp(ended / 1000.0), part
  FROM jsonb_to_recordset($19::jsonb) AS x(run_id text, session_key text, status text, text text, error text,
    queued float8, started float8, ended float8, part smallint)
  ON CONFLICT (run_id) DO UPDATE
    SET session_key = EXCLUDED.session_key, status = EXCLUDED.status, text = EXCLUDED.text, error = EXCLUDED.error,
        queued_at = EXCLUDED.queued_at, started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at,
        part = EXCLUDED.part
)`;

// A replaced row keeps its `ord` (its place); a new one takes the next, in the batch's order.
// The fence check ($14-$16: the leases of the partitions the batch touches and their fences, nulls
// when unfenced) is the upsert's one-time filter (an InitPlan): the server evaluates it before the
// upsert's first row, even when there is none, so whatever the batch holds it is refused whole by
// one stale fence. (A CTE nobody references would never run.)
const UPSERTS = `
INSERT INTO state_rows (tbl, key, value, part)
SELECT tbl, key, value, part FROM unnest($11::text[], $12::text[], $13::jsonb[], $17::smallint[])
  WITH ORDINALITY AS w(tbl, key, value, part, n)
WHERE (SELECT cluster_check_fences($14::text[], $15::text, $16::bigint[]))
ORDER BY n
ON CONFLICT (tbl, key) DO UPDATE SET value = EXCLUDED.value, part = EXCLUDED.part, updated_at = now()`;

/**
 * A whole batch as one statement (atomic on its own: no BEGIN/COMMIT), prepared once per
 * connection. Every part runs to completion whatever its number of rows, none of zero.
 */
const BATCH = `WITH ${APPENDS}, ${DELETES}, ${HANDOFFS}, ${RESULTS} ${UPSERTS}`;

/** What a batch carries besides its row changes: run results (jsonb text of their {@link resultRecord}s) and hand-off rows to delete (their ids). */
interface BatchExtras {
  results: string;
  handoffs: string[];
}

const NO_EXTRAS: BatchExtras = { results: "[]", handoffs: [] };

/**
 * The parameters of {@link BATCH}: appends $1-$8 (and their parts, $18), removals $9-$10, upserts
 * $11-$13 (and parts, $17), the fence $14-$16, run results $19, hand-off ids $20.
 */
function batchValues(
  appends: EventAppend[],
  removed: RowChange[],
  written: RowChange[],
  fence: CarriedFence | undefined,
  extras = NO_EXTRAS,
): unknown[] {
  const of = <T, K extends keyof T>(items: T[], key: K) => items.map((item) => item[key]);
  return [
    of(appends, "agent"),
    of(appends, "name"),
    of(appends, "header"),
    of(appends, "eid"),
    of(appends, "bytes"),
    of(appends, "at"),
    of(appends, "tool"),
    of(appends, "json"),
    of(removed, "tbl"),
    of(removed, "key"),
    of(written, "tbl"),
    of(written, "key"),
    of(written, "json"),
    fence?.leases ?? null,
    fence?.owner ?? null,
    fence?.fences ?? null,
    of(written, "part"),
    of(appends, "part"),
    extras.results,
    extras.handoffs,
  ];
}

/** A run result as {@link RESULTS} reads it (the row writer passes their array as jsonb text); `part`: its session's partition. */
export function resultRecord(row: RunResultRow, part: number | null) {
  const { runId, sessionKey, status, text, error, queuedAt, startedAt, endedAt } = row;
  return {
    run_id: runId,
    session_key: sessionKey,
    status,
    text,
    error,
    queued: queuedAt,
    started: startedAt,
    ended: endedAt,
    part,
  };
}

/** True when the batch fits one statement: no row is both removed and written again (one statement cannot touch a row twice). */
export function fitsOneStatement(changes: RowChange[]): boolean {
  return changes.every((change) => !change.moved);
}

/**
 * Applies a batch: its transcript appends, its row changes, its run results and its hand-off
 * deletes (`extras`). In one statement when it fits, which checks `fence` itself (when given);
 * otherwise (a row removed and written again) the appends, removals, results and hand-off deletes
 * first, then the writes, which the caller runs in one transaction (fenced by its caller).
 */
export async function applyBatch(
  client: pg.PoolClient,
  appends: EventAppend[],
  changes: RowChange[],
  fence?: CarriedFence,
  extras = NO_EXTRAS,
): Promise<void> {
  const removed = changes.filter((change) => change.json === undefined || change.moved);
  const written = changes.filter((change) => change.json !== undefined);
  const run = (values: unknown[]) => client.query({ name: "switchboard_batch", text: BATCH, values });
  if (fitsOneStatement(changes)) {
    await run(batchValues(appends, removed, written, fence, extras));
    return;
  }
  await run(batchValues(appends, removed, [], undefined, extras));
  await run(batchValues([], [], written, undefined));
}
