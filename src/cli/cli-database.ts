import type { Config } from "../config/index.js";
import { databaseTarget } from "../config/database-url.js";
import { ConfigError, ErrorCodes } from "../errors.js";
import { createMemoryLogger } from "../logger.js";
import { type PostgresDatabase, openPostgresDatabase } from "../state/postgres/database.js";
import { openMemoryState } from "../state/memory-state.js";
import { openPostgresState } from "../state/postgres/postgres-state.js";
import { postgresWorkspaces } from "../workspace/postgres-workspace.js";
import type { StatePort } from "../state/state-port.js";
import type { OpenWorkspace } from "../workspace/workspace-port.js";

/** The "postgres" backend's database for every CLI command (readers, `workspace`, `doctor`): a small pool, no health probe; a reader migrates nothing. */
export async function openCliDatabase(
  config: Config,
  env: Record<string, string | undefined>,
  readOnly: boolean,
): Promise<PostgresDatabase> {
  const target = databaseTarget(config.state, env);
  if ("problem" in target) throw new ConfigError(ErrorCodes.CONFIG_INVALID, target.problem);
  return openPostgresDatabase({
    ...target,
    poolSize: 1,
    logger: createMemoryLogger(),
    probeEveryMs: 0,
    ...(readOnly && { readOnly }),
  });
}

/** The "postgres" backend's workspaces for the CLI. */
export async function openWorkspaceDatabase(
  config: Config,
  env: Record<string, string | undefined>,
  readOnly: boolean,
): Promise<{ workspaces: OpenWorkspace; close(): Promise<void> }> {
  const database = await openCliDatabase(config, env, readOnly);
  return { workspaces: postgresWorkspaces(database), close: () => database.close() };
}

/**
 * The "postgres" backend's state port, read-only, for the CLI's readers (`sessions`, `status`,
 * `doctor`, `cron list`). A schema no gateway has created yet (version 0) reads as empty.
 */
export async function openStateDatabase(
  config: Config,
  env: Record<string, string | undefined>,
): Promise<{ state: StatePort; where: string; close(): Promise<void> }> {
  const database = await openCliDatabase(config, env, true);
  const where = `${database.shownUrl} (schema ${database.schema})`;
  const state =
    database.schemaVersion === 0
      ? openMemoryState({ readOnly: true })
      : openPostgresState(database, { logger: createMemoryLogger(), readOnly: true });
  return {
    state,
    where,
    async close() {
      await state.close();
      await database.close();
    },
  };
}
