import { type OpenWorkspace, entriesIn, workspaceFilePath, workspacePath } from "./workspace-port.js";
import type { PostgresDatabase } from "../state/postgres/database.js";

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

/** The workspaces of the "postgres" backend: each file one row of `workspace_files` (migration 0003). */
export function postgresWorkspaces(database: PostgresDatabase): OpenWorkspace {
  const readFile = batchedReads(database);
  return (agentId) => ({
    location: `postgres:${database.schema}/workspace/${agentId}`,
    read: async (given) => readFile(agentId, workspaceFilePath(given)),
    async write(given, text) {
      // One upsert: the row is the old text or the new one, never part of either.
      await database.transaction(
        (c) =>
          c.query(
            `INSERT INTO workspace_files (agent, path, content) VALUES ($1, $2, $3)
           ON CONFLICT (agent, path) DO UPDATE SET content = EXCLUDED.content, updated_at = now()`,
            [agentId, workspaceFilePath(given), text.replaceAll("\0", "\uFFFD")],
          ),
        { single: true },
      );
    },
    async list(given = ".") {
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
    },
  });
}
