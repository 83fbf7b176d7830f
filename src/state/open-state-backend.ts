import { databaseTarget } from "../config/database-url.js";
import type { StateConfig } from "../config/schema/state.js";
import { ConfigError, ErrorCodes } from "../errors.js";
import { type LocalStateOptions, openLocalState } from "./local-state.js";
import { type DatabaseHealth, type PostgresDatabase, openPostgresDatabase } from "./postgres/database.js";
import { backfillTranscriptParts } from "./postgres/partitions.js";
import { openPostgresState } from "./postgres/postgres-state.js";
import type { StatePort } from "./state-port.js";

/** The gateway's state on the backend its config names. */
export interface StateBackend {
  /** the port every store writes through; closing it closes the database too */
  state: StatePort;
  /** the PostgreSQL database ("postgres" backend): other ports (transcripts, workspace) use its pool */
  database?: PostgresDatabase;
  /** where the state lives, for the start banner and logs: a folder, or the url (password masked) and schema */
  where: string;
  /** whether storage answers; the local backend always does (a failing disk fails the write instead) */
  health(): DatabaseHealth;
}

/** Options of {@link openStateBackend}. */
export interface StateBackendOptions extends LocalStateOptions {
  /** `state` of the config */
  config: StateConfig;
  /** where SWITCHBOARD_DATABASE_URL is read */
  env: Record<string, string | undefined>;
  /** "postgres": runs once the database is open and before any state is read (the gateway takes its cluster lease here); its database is used */
  guard?: (database: PostgresDatabase) => Promise<PostgresDatabase>;
}

/** A port whose close also closes the database it writes to. */
function closingDatabase(state: StatePort, database: PostgresDatabase): StatePort {
  return {
    readOnly: state.readOnly,
    table: (spec) => state.table(spec),
    commit: (fn) => state.commit(fn),
    flush: () => state.flush(),
    async close() {
      await state.close();
      await database.close();
    },
  };
}

/**
 * Opens the state where `state.backend` says: local files under the home's `state/` folder, or a
 * PostgreSQL schema (connected and migrated here). A "postgres" backend without a usable url is a
 * config error; a database that cannot be used rejects with one line naming the url and the fix.
 */
export async function openStateBackend(options: StateBackendOptions): Promise<StateBackend> {
  const since = Date.now();
  if (options.config.backend === "local")
    return { state: openLocalState(options), where: options.dir, health: () => ({ ok: true, since }) };
  const target = databaseTarget(options.config, options.env);
  if ("problem" in target) throw new ConfigError(ErrorCodes.CONFIG_INVALID, target.problem);
  const { logger, readOnly } = options;
  const opened = await openPostgresDatabase({ ...target, logger, ...(readOnly && { readOnly }) });
  const database = options.guard
    ? await options.guard(opened).catch(async (err: unknown) => {
        await opened.close();
        throw err;
      })
    : opened;
  // The writer (a gateway owning the schema) gives transcripts stored before migration 0008 their
  // sessions' parts; state rows get theirs as their tables open (./postgres/postgres-state.ts).
  if (!readOnly)
    await backfillTranscriptParts(database).catch(async (err: unknown) => {
      await database.close();
      throw err;
    });
  const state = openPostgresState(database, { logger, ...(readOnly && { readOnly }) });
  logger.info(
    { url: database.shownUrl, schema: database.schema, schemaVersion: database.schemaVersion },
    "state on PostgreSQL",
  );
  return {
    state: closingDatabase(state, database),
    database,
    where: `${database.shownUrl} (schema ${database.schema})`,
    health: database.health,
  };
}
