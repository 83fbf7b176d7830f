import { ErrorCodes, SwitchboardError } from "../../errors.js";
import { randomUUID } from "node:crypto";
import type pg from "pg";
import {
  archiveName,
  checkedMessage,
  newTranscriptHeader,
  pageEnd,
  pageFrom,
  type SequencedMessage,
} from "./stored-transcript.js";
import { createRecentMessages } from "./recent-messages.js";
import { isToolMessage, type TranscriptHeader, type TranscriptMessage } from "./transcript-event.js";
import { assertTranscriptId } from "./transcript-path.js";
import type { OpenTranscripts } from "../agent-sessions.js";
import { sessionsTableName } from "../session-table.js";
import type { TranscriptListing, Transcripts } from "./transcripts-port.js";
import type { PostgresDatabase } from "../../state/postgres/database.js";
import { partOfSession } from "../../state/postgres/partitions.js";
import { jsonbText, rowWriterOf } from "../../state/postgres/row-writer.js";

/** What {@link createPostgresTranscripts} needs. */
export interface PostgresTranscriptsDeps {
  database: PostgresDatabase;
  agentId: string;
  /** clock in ms; default `Date.now` */
  now?: () => number;
}

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

/**
 * The archives of an agent and its transcripts no sessions row points at: neither by its
 * `sessionId` nor by the file its `sessionFile` names. (A row points at one of the two, see
 * `transcriptRef`; counting both as pointed at can only keep a transcript, never purge a live one.)
 */
const UNREFERENCED = `
WITH refs AS (
  SELECT value->>'sessionId' AS name FROM state_rows WHERE tbl = $2
  UNION SELECT substring(value->>'sessionFile' FROM '([^/]+)\\.jsonl$') FROM state_rows WHERE tbl = $2
)
SELECT ${LISTING} FROM transcripts t
WHERE t.agent = $1 AND (t.archived_at IS NOT NULL OR NOT EXISTS (SELECT 1 FROM refs WHERE refs.name = t.name))
ORDER BY t.tid`;

/** Messages (and their JSON bytes per transcript, and in all) {@link Transcripts.recent} keeps in memory, as the local files do. */
const KEPT = { messages: 200, fileBytes: 1024 * 1024, totalBytes: 64 * 1024 * 1024 };

/**
 * The newest messages of each transcript, kept once read and updated as appends commit, so a warm
 * session's turn reads nothing (the gateway is the one writer of its schema). A read is kept only
 * when no append to that transcript was queued or committed while it ran: it may or may not have
 * seen that append, so keeping it could lose or double the message.
 */
function keptRecent() {
  const kept = createRecentMessages(KEPT);
  const queued = new Map<string, number>();
  return {
    get: (id: string, limit: number) => kept.get(id, limit),
    /** Reads the newest messages with `read` and keeps them when nothing raced the read. */
    async fill(id: string, read: () => Promise<TranscriptMessage[]>) {
      const version = kept.version(id);
      const messages = await read();
      if (!queued.has(id))
        kept.put(
          id,
          version,
          messages,
          messages.map((m) => JSON.stringify(m).length),
        );
      return messages;
    },
    /** Counts `append` as queued until it settles; a committed message is added, a failed one drops what is kept. */
    track(id: string, message: string, append: Promise<void>): Promise<void> {
      queued.set(id, (queued.get(id) ?? 0) + 1);
      const settled = append.then(
        () => kept.appended(id, JSON.parse(message) as TranscriptMessage, message.length),
        (err: unknown) => {
          kept.removed(id);
          throw err;
        },
      );
      return settled.finally(() => {
        const left = queued.get(id)! - 1;
        if (left > 0) queued.set(id, left);
        else queued.delete(id);
      });
    },
    removed: (id: string) => kept.removed(id),
  };
}

type Run = <T>(fn: (client: pg.PoolClient) => Promise<T>) => Promise<T>;

/** A live transcript's row (an archive's name reads too: `state migrate` copies archives). */
async function liveRow(reading: Run, agentId: string, id: string) {
  const { rows } = await reading((c) =>
    c.query<{ tid: string; last_seq: string; header: TranscriptHeader }>(
      "SELECT tid, last_seq, header FROM transcripts WHERE agent = $1 AND name = $2",
      [agentId, id.includes(".jsonl.") ? id : assertTranscriptId(id)],
    ),
  );
  const row = rows[0];
  return row && { tid: row.tid, lastSeq: Number(row.last_seq), header: row.header };
}

/** Renames transcript `id` to its archive's first free name at `at`; its name, or undefined when there was none. */
async function archiveRow(c: pg.PoolClient, agentId: string, id: string, at: number): Promise<string | undefined> {
  const taken = await c.query<{ name: string }>("SELECT name FROM transcripts WHERE agent = $1 AND name LIKE $2", [
    agentId,
    `${archiveName(id, at, 0).replaceAll(/[\\%_]/g, "\\$&")}%`,
  ]);
  const names = new Set(taken.rows.map((row) => row.name));
  let name = archiveName(id, at, 0);
  for (let n = 1; names.has(name); n++) name = archiveName(id, at, n);
  const moved = await c.query(
    "UPDATE transcripts SET name = $3, archived_at = to_timestamp($4 / 1000.0) WHERE agent = $1 AND name = $2",
    [agentId, id, name, at],
  );
  return moved.rowCount === 1 ? name : undefined;
}

/** The reads of one agent's transcripts; `recent` answers from what is kept in memory when it can. */
function transcriptReads(reading: Run, agentId: string, recentKept: ReturnType<typeof keptRecent>) {
  const live = (id: string) => liveRow(reading, agentId, id);
  const reads = {
    async readTail(id: string, options: Parameters<Transcripts["readTail"]>[1]) {
      const t = await live(id);
      const before = pageEnd(options, (t?.lastSeq ?? 0) + 1);
      if (!t) return { messages: [], hasMore: false };
      const { rows } = await reading((c) =>
        c.query<SequencedMessage>(TAIL_QUERY, [t.tid, before, options.includeTools ?? false, options.limit + 1]),
      );
      return pageFrom(rows, options.limit);
    },
    async recent(id: string, limit: number) {
      const read = async (n: number) => (await reads.readTail(id, { limit: n, includeTools: true })).messages;
      // A limit out of range is read from the rows, which also refuses a bad one.
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > KEPT.messages) return read(limit);
      return recentKept.get(id, limit) ?? (await recentKept.fill(id, () => read(KEPT.messages))).slice(-limit);
    },
    preview: async (id: string, limit: number) => (await reads.readTail(id, { limit })).messages,
    readHeader: async (id: string) => (await live(id))?.header,
    async list() {
      const { rows } = await reading((c) =>
        c.query<ListingRow>(`SELECT ${LISTING} FROM transcripts WHERE agent = $1 ORDER BY tid`, [agentId]),
      );
      return rows.map(listingOf);
    },
    async unreferenced() {
      const { rows } = await reading((c) => c.query<ListingRow>(UNREFERENCED, [agentId, sessionsTableName(agentId)]));
      return rows.map(listingOf);
    },
    async stat(id: string) {
      const { rows } = await reading((c) =>
        c.query<ListingRow>(`SELECT ${LISTING} FROM transcripts WHERE agent = $1 AND name = $2`, [
          agentId,
          assertTranscriptId(id),
        ]),
      );
      return rows[0] && listingOf(rows[0]);
    },
  };
  return reads;
}

/** Promises still running, so `close` can wait for them. */
function inFlightSet() {
  const inFlight = new Set<Promise<unknown>>();
  return {
    track<T>(work: Promise<T>): Promise<T> {
      inFlight.add(work);
      const done = () => inFlight.delete(work);
      work.then(done, done);
      return work;
    },
    async settled() {
      while (inFlight.size > 0) await Promise.allSettled(inFlight);
    },
  };
}

/** The transcripts of one agent as rows of the deployment's schema (migration 0002). */
export function createPostgresTranscripts(deps: PostgresTranscriptsDeps): Transcripts {
  const { database, agentId, now = Date.now } = deps;
  // Appends join the state port's group commit: the events and rows of one step are one transaction.
  const writer = rowWriterOf(database);
  // An archive waits for the appends before it, and appends to that transcript after it wait for it.
  const archiving = new Map<string, Promise<unknown>>();
  const work = inFlightSet();
  const recentKept = keptRecent();
  const reading: Run = (fn) => database.transaction(fn, { single: true, readOnly: true });
  const scope = `postgres:${database.schema}/${agentId}`;
  // A turn a stopped core cut off must not append behind the next core's image (a reopen, `cluster.owners: "many"`).
  let closed = false;
  const open = () => {
    if (closed) throw new SwitchboardError(ErrorCodes.UNAVAILABLE, `the transcripts of agent "${agentId}" are closed`);
  };
  return {
    scope,
    joinsStateCommit: true,
    location: (id) => `${scope}/${id}`,
    ...transcriptReads(reading, agentId, recentKept),
    async append(id, input, options) {
      open();
      const nowMs = now();
      const message = checkedMessage(input, nowMs);
      const json = jsonbText(message);
      const header = jsonbText(newTranscriptHeader(assertTranscriptId(id), options, nowMs));
      const event = { agent: agentId, name: id, header, eid: randomUUID(), bytes: Buffer.byteLength(json), at: nowMs };
      const part = partOfSession(database, options?.sessionKey);
      const appended = { ...event, tool: isToolMessage(message), json, part };
      // Queued in the caller's synchronous step (no await before it), unless the transcript is being archived.
      const before = archiving.get(id);
      const queued = before ? before.then(() => writer.append(appended)) : writer.append(appended);
      await work.track(recentKept.track(id, json, queued));
    },
    async remove(id, options) {
      open();
      assertTranscriptId(id);
      const at = options?.now ?? now();
      // Fenced by its session's partition (no session named: the writer lease).
      const parts = [partOfSession(database, options?.sessionKey)];
      const archived = writer
        .queuedSoFar()
        .then(() => database.transaction((c) => archiveRow(c, agentId, id, at), { parts }));
      const settled = archived.then(
        () => recentKept.removed(id),
        () => recentKept.removed(id),
      );
      archiving.set(id, settled);
      void settled.then(() => archiving.get(id) === settled && archiving.delete(id));
      return work.track(archived);
    },
    async purge(id, options) {
      recentKept.removed(id);
      const gone = await database.transaction(
        (c) => c.query("DELETE FROM transcripts WHERE agent = $1 AND name = $2", [agentId, id]),
        { single: true, parts: [partOfSession(database, options?.sessionKey)] },
      );
      return gone.rowCount === 1;
    },
    forget: (id) => recentKept.removed(id),
    close: () => {
      closed = true;
      return work.settled();
    },
  };
}

/** The gateway's transcripts opener on PostgreSQL (`GatewayCoreDeps.openTranscripts`): each agent's rows in `database`. */
export function postgresTranscriptsOpener(database: PostgresDatabase): OpenTranscripts {
  return ({ agentId, now }) => createPostgresTranscripts({ database, agentId, ...(now && { now }) });
}
