import path from "node:path";
import { workspaceDir } from "../agents/workspace/workspace-dir.js";
import type { Logger } from "../logger.js";
import { createTranscripts } from "../sessions/transcripts/create-transcripts.js";
import type { Transcripts } from "../sessions/transcripts/transcripts-port.js";
import { createLocalWorkspace } from "../workspace/local-workspace.js";
import type { Workspace } from "../workspace/workspace-port.js";
import { openLocalState } from "../state/local-state.js";
import { openPostgresDatabase } from "../state/postgres/database.js";
import { openPostgresState } from "../state/postgres/postgres-state.js";
import { createPostgresTranscripts } from "../sessions/transcripts/postgres-transcripts.js";
import { postgresWorkspaces } from "../workspace/postgres-workspace.js";
import type { StatePort } from "../state/state-port.js";
import { type HomeLayout, agentOfTable, localHomeTables, localTablePath } from "./home-tables.js";

/** One end of a migration: a backend's state port, transcripts and workspaces, and what it holds. */
export interface MigrationSide {
  /** for messages: the home's folder, or the url (password masked) and schema */
  readonly where: string;
  readonly state: StatePort;
  /** PostgreSQL: the schema's version (its migrations) */
  readonly schemaVersion?: number;
  /** the state tables this side holds (or would hold) */
  tables(): Promise<string[]>;
  /** the path a table is opened with (the local backend keeps it there; PostgreSQL only names it) */
  tablePath(name: string): string;
  /** agents this side holds transcripts or workspaces of */
  agents(): Promise<string[]>;
  transcripts(agentId: string): Transcripts;
  workspace(agentId: string): Workspace;
  close(): Promise<void>;
}

/** Options of both openers. */
interface SideOptions {
  logger: Logger;
  /** the source of a migration: nothing is written, moved or migrated */
  readOnly: boolean;
}

/** Transcripts opened once per agent, closed with the side. */
function transcriptsCache(open: (agentId: string) => Transcripts) {
  const opened = new Map<string, Transcripts>();
  return {
    get(agentId: string): Transcripts {
      const found = opened.get(agentId) ?? open(agentId);
      opened.set(agentId, found);
      return found;
    },
    close: () => Promise.all([...opened.values()].map((t) => t.close())),
  };
}

/** A home on the local backend: tables under `state/` and the session store files, JSONL transcripts, workspace folders. */
export function openLocalSide(layout: HomeLayout, options: SideOptions): MigrationSide {
  const { logger } = options;
  const state = openLocalState({ dir: path.join(layout.paths.home, "state"), logger, readOnly: options.readOnly });
  const storeDir = (agentId: string) => path.dirname(localTablePath(layout, `sessions:${agentId}`));
  const transcripts = transcriptsCache((agentId) => createTranscripts({ dir: storeDir(agentId), logger }));
  return {
    where: layout.paths.home,
    state,
    tables: () => localHomeTables(layout),
    tablePath: (name) => localTablePath(layout, name),
    async agents() {
      const names = await localHomeTables(layout);
      return names.map(agentOfTable).filter((id): id is string => id !== undefined);
    },
    transcripts: (agentId) => transcripts.get(agentId),
    workspace: (agentId) => createLocalWorkspace(workspaceDir(layout.config, layout.paths.home, agentId)),
    async close() {
      await transcripts.close();
      await state.close();
    },
  };
}

const AGENTS_QUERY = `SELECT agent FROM transcripts UNION SELECT agent FROM workspace_files
  UNION SELECT substr(tbl, 10) FROM state_rows WHERE tbl LIKE 'sessions:%' ORDER BY 1`;

/** A PostgreSQL schema (created and migrated unless read-only): rows of `state_rows`, `transcripts`, `workspace_files`. */
export async function openPostgresSide(
  target: { url: string; schema: string },
  options: SideOptions & { configuredAgents: string[] },
): Promise<MigrationSide> {
  const { logger, readOnly } = options;
  const database = await openPostgresDatabase({ ...target, poolSize: 2, logger, probeEveryMs: 0, readOnly });
  const state = openPostgresState(database, { logger, readOnly });
  const transcripts = transcriptsCache((agentId) => createPostgresTranscripts({ database, agentId }));
  const workspaces = postgresWorkspaces(database);
  return {
    where: `${database.shownUrl} (schema ${database.schema})`,
    state,
    schemaVersion: database.schemaVersion,
    async tables() {
      const { rows } = await database.pool.query<{ tbl: string }>("SELECT DISTINCT tbl FROM state_rows ORDER BY tbl");
      return rows.map((row) => row.tbl);
    },
    tablePath: (name) => `postgres:${database.schema}/${name}`,
    async agents() {
      const { rows } = await database.pool.query<{ agent: string }>(AGENTS_QUERY);
      return [...new Set([...options.configuredAgents, ...rows.map((row) => row.agent)])];
    },
    transcripts: (agentId) => transcripts.get(agentId),
    workspace: (agentId) => workspaces(agentId),
    async close() {
      await transcripts.close();
      await state.close();
      await database.close();
    },
  };
}
