import { randomUUID } from "node:crypto";
import type pg from "pg";
import { createKeyedMutex } from "../keyed-mutex.js";
import {
  archiveName,
  checkedMessage,
  newTranscriptHeader,
  pageEnd,
  pageFrom,
  type SequencedMessage,
} from "./stored-transcript.js";
import { isToolMessage, type TranscriptHeader } from "./transcript-event.js";
import { assertTranscriptId } from "./transcript-path.js";
import type { OpenTranscripts } from "../agent-sessions.js";
import type { TranscriptListing, Transcripts } from "./transcripts-port.js";
import type { PostgresDatabase } from "../../state/postgres/database.js";
import { jsonbText } from "../../state/postgres/row-writer.js";

/** What {@link createPostgresTranscripts} needs. */
export interface PostgresTranscriptsDeps {
  database: PostgresDatabase;
  agentId: string;
  /** clock in ms; default `Date.now` */
  now?: () => number;
}

/**
 * One statement: creates the transcript (with its header) or bumps its sequence, then inserts the
 * event with that number. The row lock of the upsert orders appends to one transcript; an append
 * whose event id is already the last one (a retry after a lost COMMIT) changes nothing.
 */
const APPEND = `
WITH t AS (
  INSERT INTO transcripts AS t (agent, name, header, last_seq, last_eid, bytes, updated_at)
  VALUES ($1, $2, $3::jsonb, 1, $4, $5, to_timestamp($6 / 1000.0))
  ON CONFLICT (agent, name) DO UPDATE
    SET last_seq = t.last_seq + 1, last_eid = EXCLUDED.last_eid, bytes = t.bytes + EXCLUDED.bytes,
        updated_at = EXCLUDED.updated_at
    WHERE t.last_eid IS DISTINCT FROM EXCLUDED.last_eid
  RETURNING tid, last_seq
)
INSERT INTO transcript_events (tid, seq, tool, message) SELECT tid, last_seq, $7, $8::jsonb FROM t`;

/**
 * A tail read: newest first along the primary key (tid, seq), stopping after `limit + 1` matches.
 * It orders by the column `e.seq`, not the output alias (a float8 cast the index cannot give).
 */
export const TAIL_QUERY = `
SELECT e.seq::float8 AS seq, e.message FROM transcript_events e
WHERE e.tid = $1 AND e.seq < $2 AND ($3 OR NOT e.tool) ORDER BY e.seq DESC LIMIT $4`;

const LISTING = `name AS id, bytes::float8 AS bytes, extract(epoch FROM updated_at) * 1000 AS "updatedAt",
  extract(epoch FROM archived_at) * 1000 AS "archivedAt"`;

type ListingRow = Omit<TranscriptListing, "archivedAt"> & { archivedAt: number | null };

function listingOf(row: ListingRow): TranscriptListing {
  const { archivedAt, ...rest } = row;
  return { ...rest, updatedAt: Number(rest.updatedAt), ...(archivedAt !== null && { archivedAt: Number(archivedAt) }) };
}

/** The transcripts of one agent as rows of the deployment's schema (migration 0002). */
export function createPostgresTranscripts(deps: PostgresTranscriptsDeps): Transcripts {
  const { database, agentId, now = Date.now } = deps;
  const lock = createKeyedMutex(); // appends and archives of one transcript, in call order
  const inFlight = new Set<Promise<unknown>>();
  const run = <T>(fn: (client: pg.PoolClient) => Promise<T>) => database.transaction(fn);
  const scope = `postgres:${database.schema}/${agentId}`;

  function track<T>(work: Promise<T>): Promise<T> {
    inFlight.add(work);
    const done = () => inFlight.delete(work);
    work.then(done, done);
    return work;
  }

  async function live(id: string): Promise<{ tid: string; lastSeq: number; header: TranscriptHeader } | undefined> {
    const { rows } = await run((c) =>
      c.query<{ tid: string; last_seq: string; header: TranscriptHeader }>(
        "SELECT tid, last_seq, header FROM transcripts WHERE agent = $1 AND name = $2",
        // An archive's name (`<id>.jsonl.deleted.<time>`) reads too: `state migrate` copies archives.
        [agentId, id.includes(".jsonl.") ? id : assertTranscriptId(id)],
      ),
    );
    const row = rows[0];
    return row && { tid: row.tid, lastSeq: Number(row.last_seq), header: row.header };
  }

  return {
    scope,
    location: (id) => `${scope}/${id}`,
    async append(id, input, options) {
      const nowMs = now();
      const message = checkedMessage(input, nowMs);
      const json = jsonbText(message);
      const header = jsonbText(newTranscriptHeader(id, options, nowMs));
      const eid = randomUUID();
      const params = [agentId, id, header, eid, Buffer.byteLength(json), nowMs, isToolMessage(message), json];
      await track(lock.run(id, () => run((c) => c.query(APPEND, params))));
    },
    async readTail(id, options) {
      const t = await live(id);
      const before = pageEnd(options, (t?.lastSeq ?? 0) + 1);
      if (!t) return { messages: [], hasMore: false };
      const { rows } = await run((c) =>
        c.query<SequencedMessage>(TAIL_QUERY, [t.tid, before, options.includeTools ?? false, options.limit + 1]),
      );
      return pageFrom(rows, options.limit);
    },
    async recent(id, limit) {
      return (await this.readTail(id, { limit, includeTools: true })).messages;
    },
    async preview(id, limit) {
      return (await this.readTail(id, { limit })).messages;
    },
    readHeader: async (id) => (await live(id))?.header,
    async remove(id, options) {
      assertTranscriptId(id);
      const at = options?.now ?? now();
      return track(
        lock.run(id, () =>
          run(async (c) => {
            const taken = await c.query<{ name: string }>(
              "SELECT name FROM transcripts WHERE agent = $1 AND name LIKE $2",
              [agentId, `${archiveName(id, at, 0).replaceAll(/[\\%_]/g, "\\$&")}%`],
            );
            const names = new Set(taken.rows.map((row) => row.name));
            let name = archiveName(id, at, 0);
            for (let n = 1; names.has(name); n++) name = archiveName(id, at, n);
            const moved = await c.query(
              "UPDATE transcripts SET name = $3, archived_at = to_timestamp($4 / 1000.0) WHERE agent = $1 AND name = $2",
              [agentId, id, name, at],
            );
            return moved.rowCount === 1 ? name : undefined;
          }),
        ),
      );
    },
    async purge(id) {
      const gone = await run((c) => c.query("DELETE FROM transcripts WHERE agent = $1 AND name = $2", [agentId, id]));
      return gone.rowCount === 1;
    },
    async list() {
      const { rows } = await run((c) =>
        c.query<ListingRow>(`SELECT ${LISTING} FROM transcripts WHERE agent = $1 ORDER BY tid`, [agentId]),
      );
      return rows.map(listingOf);
    },
    async stat(id) {
      const { rows } = await run((c) =>
        c.query<ListingRow>(`SELECT ${LISTING} FROM transcripts WHERE agent = $1 AND name = $2`, [
          agentId,
          assertTranscriptId(id),
        ]),
      );
      return rows[0] && listingOf(rows[0]);
    },
    async close() {
      while (inFlight.size > 0) await Promise.allSettled(inFlight);
    },
  };
}

/** The gateway's transcripts opener on PostgreSQL (`GatewayCoreDeps.openTranscripts`): each agent's rows in `database`. */
export function postgresTranscriptsOpener(database: PostgresDatabase): OpenTranscripts {
  return ({ agentId, now }) => createPostgresTranscripts({ database, agentId, ...(now && { now }) });
}
