import { type OpenWorkspace, entriesIn, workspaceFilePath, workspacePath } from "./workspace-port.js";
import type { PostgresDatabase } from "../state/postgres/database.js";

/** The workspaces of the "postgres" backend: each file one row of `workspace_files` (migration 0003). */
export function postgresWorkspaces(database: PostgresDatabase): OpenWorkspace {
  return (agentId) => ({
    location: `postgres:${database.schema}/workspace/${agentId}`,
    async read(given) {
      const { rows } = await database.transaction(
        (c) =>
          c.query<{ content: string }>("SELECT content FROM workspace_files WHERE agent = $1 AND path = $2", [
            agentId,
            workspaceFilePath(given),
          ]),
        { single: true, readOnly: true },
      );
      return rows[0]?.content;
    },
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
