import type { Config, SwitchboardPaths } from "../config/index.js";
import { SCHEMA_NAME, databaseTarget } from "../config/database-url.js";
import { ConfigError, ErrorCodes } from "../errors.js";
import type { Logger } from "../logger.js";
import { type MigrationSide, openLocalSide, openPostgresSide } from "./migration-side.js";

/** The home a CLI command works on, and where PostgreSQL is when asked. */
export interface SideContext {
  config: Config;
  paths: SwitchboardPaths;
  homeDir: string;
  env: Record<string, string | undefined>;
  logger: Logger;
  /** `--url` / `--schema`: the database instead of the config's `state.postgres` (and SWITCHBOARD_DATABASE_URL) */
  url?: string;
  schema?: string;
}

/** The database and schema to use: flags first, then the config, then SWITCHBOARD_DATABASE_URL; a bad one is a config error. */
function postgresTarget(context: SideContext): { url: string; schema: string } {
  const { config, url, schema } = context;
  if (schema !== undefined && !SCHEMA_NAME.test(schema))
    throw new ConfigError(
      ErrorCodes.CONFIG_INVALID,
      `--schema ${JSON.stringify(schema)}: use a lower-case SQL name (letters, digits, _), e.g. "switchboard"`,
    );
  const postgres = { ...config.state.postgres, ...(url !== undefined && { url }), ...(schema && { schema }) };
  const target = databaseTarget({ ...config.state, postgres }, context.env);
  if ("problem" in target)
    throw new ConfigError(ErrorCodes.CONFIG_INVALID, url !== undefined ? `--url: ${target.problem}` : target.problem);
  return target;
}

/** The home's state on `backend`: its local files, or the PostgreSQL schema (migrated first unless read-only). */
export async function openSide(
  backend: "local" | "postgres",
  context: SideContext,
  readOnly: boolean,
): Promise<MigrationSide> {
  const { config, paths, homeDir, logger } = context;
  if (backend === "local") return openLocalSide({ config, paths, homeDir }, { logger, readOnly });
  const configuredAgents = config.agents.list.length ? config.agents.list.map((agent) => agent.id) : ["main"];
  return openPostgresSide(postgresTarget(context), { logger, readOnly, configuredAgents });
}
