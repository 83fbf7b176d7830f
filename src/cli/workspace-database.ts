import type { Config } from "../config/index.js";
import { databaseTarget } from "../config/database-url.js";
import { ConfigError, ErrorCodes } from "../errors.js";
import { createMemoryLogger } from "../logger.js";
import { openPostgresDatabase } from "../state/postgres/database.js";
import { postgresWorkspaces } from "../workspace/postgres-workspace.js";
import type { OpenWorkspace } from "../workspace/workspace-port.js";

/** The "postgres" backend's workspaces for the CLI: a small pool, no health probe; a reader migrates nothing. */
export async function openWorkspaceDatabase(
  config: Config,
  env: Record<string, string | undefined>,
  readOnly: boolean,
): Promise<{ workspaces: OpenWorkspace; close(): Promise<void> }> {
  const target = databaseTarget(config.state, env);
  if ("problem" in target) throw new ConfigError(ErrorCodes.CONFIG_INVALID, target.problem);
  const database = await openPostgresDatabase({
    ...target,
    poolSize: 1,
    logger: createMemoryLogger(),
    probeEveryMs: 0,
    ...(readOnly && { readOnly }),
  });
  return { workspaces: postgresWorkspaces(database), close: () => database.close() };
}
