import pg from "pg";
import { SwitchboardError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { SCHEMA_NAME, maskDatabaseUrl } from "../../config/schema/state.js";

/** Where a gateway's state lives on PostgreSQL (`state.postgres` in the config). */
export interface PostgresTarget {
  /** `postgres://user:password@host:5432/database` */
  url: string;
  /** the deployment's schema: several deployments can share one database */
  schema: string;
  /** connections at most; default 10 */
  poolSize?: number;
}

/** Options of {@link openPostgresPool}. */
export interface PostgresPoolOptions extends PostgresTarget {
  logger: Logger;
  /** shown in `pg_stat_activity`; default "switchboard" */
  applicationName?: string;
  /** how long to wait for a connection before a query fails; default 5,000 ms */
  connectTimeoutMs?: number;
}

/** Throws unless `schema` is a plain identifier: it is the one name put into SQL text, so it is checked first. */
export function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema))
    throw new SwitchboardError(
      "INVALID_ARGUMENT",
      `state.postgres.schema "${schema}" is not a plain lower-case identifier (letters, digits, "_"; at most 63)`,
    );
}

/**
 * A pool of connections whose `search_path` is the deployment's schema, so every query names its
 * tables unqualified and parameters carry every value (the schema name is checked, never quoted
 * from input). Idle connections that break (the server restarted) are logged and replaced, never
 * an uncaught error.
 */
export function openPostgresPool(options: PostgresPoolOptions): pg.Pool {
  assertSchemaName(options.schema);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    application_name: options.applicationName ?? "switchboard",
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    keepAlive: true,
    options: `-c search_path=${options.schema}`,
  });
  // A connection that breaks while checked out emits "error" on itself; the query in flight rejects
  // with it (and is retried by the caller), so the event itself needs no more than a listener.
  pool.on("connect", (client) => client.on("error", () => {}));
  pool.on("error", (err) => {
    options.logger.debug({ err, url: maskDatabaseUrl(options.url) }, "an idle PostgreSQL connection broke");
  });
  return pool;
}
