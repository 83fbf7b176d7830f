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
 * Fenced by the writer lease: rows without a part are rows of no session until then, the global holder's.
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

/** Transcripts without a part, after `tid`, in id order (the partial index `transcripts_part_unset`); ordered by the bigint, not the text it is read as. */
const UNSET_TRANSCRIPTS = `
SELECT t.tid::text AS tid, t.agent, t.header->>'id' AS id FROM transcripts t
WHERE t.part IS NULL AND t.tid > $1 ORDER BY t.tid LIMIT ${BACKFILL_BATCH}`;

type UnsetTranscript = { tid: string; agent: string; id: string | null };

/** The session key of each session id of `agent`'s sessions rows, read once per agent a backfill meets. */
async function sessionKeysOf(database: PostgresDatabase, agent: string): Promise<Map<string, string>> {
  const { rows } = await database.transaction(
    (client) =>
      client.query<{ key: string; id: string | null }>(
        `SELECT key, value->>'sessionId' AS id FROM state_rows WHERE tbl = $1`,
        [`sessions:${agent}`],
      ),
    { single: true, readOnly: true },
  );
  return new Map(rows.flatMap((row) => (row.id === null ? [] : [[row.id, row.key] as const])));
}

/**
 * Gives the transcripts written before migration 0008 the part of their session (the sessions row
 * of the transcript's agent whose `sessionId` its header names), in batches. Archives of a reset
 * session name an id no row holds any more: they keep none (no session owns them; the retention
 * sweep purges them). Matched here, not by a join in SQL: a join's plan on a freshly migrated
 * table (no statistics yet) took minutes at 20,000 sessions and 40,000 archives. Idempotent.
 * Fenced by the writer lease (transcripts of no part are rows of no session): a partition owner
 * without the global lease leaves it to the global holder.
 */
export async function backfillTranscriptParts(database: PostgresDatabase): Promise<void> {
  if (database.global === false) return;
  const agents = new Map<string, Promise<Map<string, string>>>();
  let after = "0";
  for (;;) {
    const { rows } = await database.transaction((client) => client.query<UnsetTranscript>(UNSET_TRANSCRIPTS, [after]), {
      single: true,
      readOnly: true,
    });
    if (rows.length === 0) return;
    const parts: Array<[tid: string, part: number]> = [];
    for (const row of rows) {
      if (!agents.has(row.agent)) agents.set(row.agent, sessionKeysOf(database, row.agent));
      const key = row.id === null ? undefined : (await agents.get(row.agent)!).get(row.id);
      if (key !== undefined) parts.push([row.tid, partOf(key, database.partitions)]);
    }
    if (parts.length > 0) await setTranscriptParts(database, parts);
    after = rows.at(-1)!.tid;
  }
}

/** Stores the parts of transcripts that have none yet; one that got a part meanwhile keeps it. */
function setTranscriptParts(database: PostgresDatabase, parts: Array<[tid: string, part: number]>) {
  return database.transaction((client) =>
    client.query(
      `UPDATE transcripts t SET part = u.part FROM unnest($1::bigint[], $2::smallint[]) AS u(tid, part)
       WHERE t.tid = u.tid AND t.part IS NULL`,
      [parts.map(([tid]) => tid), parts.map(([, part]) => part)],
    ),
  );
}
