import {
  type AppendResult,
  type OpenWorkspace,
  UPDATE_TRIES,
  entriesIn,
  keptChanging,
  workspaceFilePath,
  workspacePath,
} from "./workspace-port.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import { partOfSession } from "../state/postgres/partitions.js";
import { GlobalOnlyWriteError } from "../state/global-only-write-error.js";

/** A file read waiting for the next batch. */
interface WaitingRead {
  agent: string;
  path: string;
  done: (content: string | undefined) => void;
  failed: (err: unknown) => void;
}

/** Reads by (agent, path) in one statement, however many: an index lookup each. */
const READ_MANY = `SELECT w.agent, w.path, w.content FROM workspace_files w
  JOIN unnest($1::text[], $2::text[]) AS r(agent, path) ON w.agent = r.agent AND w.path = r.path`;

/** Most reads one statement carries. */
const READS_PER_BATCH = 1_000;

/**
 * File reads batched like the state's writes: the reads asked for in one step, and those asked for
 * while a batch is on its way, go in one statement. A turn reads its three prompt files in one round
 * trip, and a burst of turns shares a few instead of three each.
 */
function batchedReads(database: PostgresDatabase) {
  const waiting: WaitingRead[] = [];
  let draining = false;
  async function run(batch: WaitingRead[]): Promise<void> {
    try {
      const { rows } = await database.transaction(
        (c) =>
          c.query<{ agent: string; path: string; content: string }>(READ_MANY, [
            batch.map((read) => read.agent),
            batch.map((read) => read.path),
          ]),
        { single: true, readOnly: true },
      );
      const found = new Map(rows.map((row) => [`${row.agent}\0${row.path}`, row.content]));
      for (const read of batch) read.done(found.get(`${read.agent}\0${read.path}`));
    } catch (err) {
      for (const read of batch) read.failed(err);
    }
  }
  async function drain(): Promise<void> {
    while (waiting.length > 0) await run(waiting.splice(0, READS_PER_BATCH));
    draining = false;
  }
  return (agent: string, path: string): Promise<string | undefined> =>
    new Promise((done, failed) => {
      waiting.push({ agent, path, done, failed });
      if (draining) return;
      draining = true;
      queueMicrotask(() => void drain()); // the other reads of this step join the batch
    });
}

/** A batched file read (see `batchedReads`). */
type ReadFile = (agent: string, path: string) => Promise<string | undefined>;

/** PostgreSQL's text refuses NUL: it is stored as U+FFFD. */
const storable = (text: string): string => text.replaceAll("\0", "\uFFFD");

/**
 * An append as one statement (`content || $3`): two gateways appending to one file at once both
 * land, in the order their statements commit. Only while the file stays within `$4` bytes.
 */
const APPEND = `INSERT INTO workspace_files AS w (agent, path, content)
  SELECT $1::text, $2::text, $3::text WHERE octet_length($3::text) <= $4::integer
  ON CONFLICT (agent, path) DO UPDATE SET content = w.content || EXCLUDED.content, updated_at = now()
    WHERE octet_length(w.content) + octet_length(EXCLUDED.content) <= $4::integer
  RETURNING octet_length(content) AS bytes`;

/** A file created or replaced whole by one upsert: the row is the old text or the new one, never part of either. */
const WRITE = `INSERT INTO workspace_files (agent, path, content) VALUES ($1, $2, $3)
  ON CONFLICT (agent, path) DO UPDATE SET content = EXCLUDED.content, updated_at = now()`;

/** A file created only where none is (the starter files): one statement, a row another writer made stays. */
const CREATE = `INSERT INTO workspace_files (agent, path, content) VALUES ($1, $2, $3)
  ON CONFLICT (agent, path) DO NOTHING`;

/**
 * A change written only over the text it was made from (compare-and-set on the content: a change
 * is a function of the text alone, so a text changed and changed back is no conflict).
 */
const REPLACE_IF = `UPDATE workspace_files SET content = $3, updated_at = now()
  WHERE agent = $1 AND path = $2 AND content = $4`;

/**
 * How a write of agent `agentId`'s files is run: one statement, fenced by the partition of the
 * session whose turn writes (`part`; null, no session: the writer lease, which the global holder
 * alone may write under: a partition owner without it refuses before sending anything).
 */
function writeRunner(database: PostgresDatabase, agentId: string, part: number | null) {
  return <T extends object>(sql: string, params: unknown[], readOnly = false) => {
    if (!readOnly && part === null && database.global === false)
      return Promise.reject(new GlobalOnlyWriteError(`workspace of agent "${agentId}": a write of no session`));
    return database.transaction((c) => c.query<T>(sql, params), { single: true, readOnly, parts: [part] });
  };
}

/** The statements of one agent's files that write: each one statement, fenced as {@link writeRunner} says. */
function fileWrites(database: PostgresDatabase, agentId: string, part: number | null) {
  const run = writeRunner(database, agentId, part);
  return {
    async write(file: string, text: string): Promise<void> {
      await run(WRITE, [agentId, file, storable(text)]);
    },
    async create(file: string, text: string): Promise<boolean> {
      return (await run(CREATE, [agentId, file, storable(text)])).rowCount === 1;
    },
    async append(file: string, text: string, maxBytes: number): Promise<AppendResult> {
      const added = storable(text);
      const { rows } = await run<{ bytes: number }>(APPEND, [agentId, file, added, maxBytes]);
      if (rows[0]) return { bytes: Number(rows[0].bytes), written: true };
      // Over the limit: the size it would have had, for the caller's message.
      const before = await run<{ bytes: number }>(
        "SELECT octet_length(content) AS bytes FROM workspace_files WHERE agent = $1 AND path = $2",
        [agentId, file],
        true,
      );
      return { bytes: Number(before.rows[0]?.bytes ?? 0) + Buffer.byteLength(added), written: false };
    },
    /** The port's update: read, change, compare-and-set; overtaken, read again and change again. */
    async update(given: string, change: (text: string) => string, readFile: ReadFile): Promise<string | undefined> {
      const file = workspaceFilePath(given);
      for (let tries = 0; tries < UPDATE_TRIES; tries++) {
        const text = await readFile(agentId, file);
        if (text === undefined) return undefined;
        const next = change(text);
        if ((await run(REPLACE_IF, [agentId, file, storable(next), text])).rowCount === 1) return next;
      }
      throw keptChanging(given);
    },
  };
}

/** The entries of folder `given` of agent `agentId`'s files: one statement that only reads. */
async function listFiles(database: PostgresDatabase, agentId: string, given: string) {
  const folder = workspacePath(given);
  const prefix = folder === "." ? "" : `${folder}/`;
  const { rows } = await database.transaction(
    (c) =>
      c.query<{ path: string; bytes: number }>(
        "SELECT path, octet_length(content) AS bytes FROM workspace_files WHERE agent = $1 AND left(path, $2) = $3",
        [agentId, prefix.length, prefix],
      ),
    { single: true, readOnly: true },
  );
  return entriesIn(
    rows.map((row) => [row.path, Number(row.bytes)]),
    folder,
  );
}

/** The workspaces of the "postgres" backend: each file one row of `workspace_files` (migration 0003). */
export function postgresWorkspaces(database: PostgresDatabase): OpenWorkspace {
  const readFile = batchedReads(database);
  return (agentId, sessionKey) => {
    const files = fileWrites(database, agentId, partOfSession(database, sessionKey));
    return {
      location: `postgres:${database.schema}/workspace/${agentId}`,
      read: async (given) => readFile(agentId, workspaceFilePath(given)),
      append: async (given, text, maxBytes) => files.append(workspaceFilePath(given), text, maxBytes),
      update: async (given, change) => files.update(given, change, readFile),
      create: async (given, text) => files.create(workspaceFilePath(given), text),
      write: async (given, text) => files.write(workspaceFilePath(given), text),
      list: async (given = ".") => listFiles(database, agentId, given),
    };
  };
}
