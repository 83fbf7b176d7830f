// The partition (`part`, migration 0008) of the rows a gateway stores on PostgreSQL (docs/scale-out.md
// "The way there", step 1): the part of a row, and the backfill of rows stored before the column
// existed. The count is the schema's (./partition-count.ts); which session a row belongs to is its
// table's to say (`TableSpec.sessionOf`).
import { partOf } from "../../routing/partition.js";
import type { PostgresDatabase } from "./database.js";

/** Rows updated by one statement of a backfill, so a large schema is never locked in one long transaction. */
export const BACKFILL_BATCH = 1_000;

/** The part of a row of session `sessionKey` (null: the row belongs to no session). */
export function partOfSession(database: PostgresDatabase, sessionKey: string | undefined): number | null {
  return sessionKey === undefined ? null : partOf(sessionKey, database.partitions);
}

/**
 * Stores the parts of table `tbl`'s rows that have none yet (written before migration 0008, or
 * copied in by `state migrate`), in batches; a row that got a part meanwhile keeps it. Idempotent.
 */
export async function backfillRowParts(
  database: PostgresDatabase,
  tbl: string,
  parts: Array<[key: string, part: number]>,
): Promise<void> {
  for (let at = 0; at < parts.length; at += BACKFILL_BATCH) {
    const batch = parts.slice(at, at + BACKFILL_BATCH);
    await database.transaction((client) =>
      client.query(
        `UPDATE state_rows r SET part = u.part FROM unnest($2::text[], $3::smallint[]) AS u(key, part)
         WHERE r.tbl = $1 AND r.key = u.key AND r.part IS NULL`,
        [tbl, batch.map(([key]) => key), batch.map(([, part]) => part)],
      ),
    );
  }
}

/**
 * Transcripts without a part whose session is known: the sessions row (of the transcript's agent)
 * whose `sessionId` the transcript's header names. Archives of a reset session name an id no row
 * holds any more: they keep none (no session owns them; the retention sweep purges them).
 */
const UNSET_TRANSCRIPTS = `
SELECT t.tid::text AS tid, s.key FROM transcripts t
JOIN state_rows s ON s.tbl = 'sessions:' || t.agent AND s.value->>'sessionId' = t.header->>'id'
WHERE t.part IS NULL AND t.tid > $1 ORDER BY t.tid LIMIT ${BACKFILL_BATCH}`;

/** Gives the transcripts written before migration 0008 the part of their session, in batches. Idempotent. */
export async function backfillTranscriptParts(database: PostgresDatabase): Promise<void> {
  let after = "0";
  for (;;) {
    const { rows } = await database.transaction(
      (client) => client.query<{ tid: string; key: string }>(UNSET_TRANSCRIPTS, [after]),
      { single: true, readOnly: true },
    );
    if (rows.length === 0) return;
    await database.transaction((client) =>
      client.query(
        `UPDATE transcripts t SET part = u.part FROM unnest($1::bigint[], $2::smallint[]) AS u(tid, part)
         WHERE t.tid = u.tid AND t.part IS NULL`,
        [rows.map((row) => row.tid), rows.map((row) => partOf(row.key, database.partitions))],
      ),
    );
    after = rows.at(-1)!.tid;
  }
}
