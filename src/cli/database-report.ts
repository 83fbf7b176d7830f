import pg from "pg";
import type { Config } from "../config/index.js";
import { databaseTarget, maskDatabaseUrl } from "../config/database-url.js";
import { type SetAsideHandoff, setAsideHandoffs } from "../cluster/handoff-sql.js";
import { isSwitchboardError } from "../errors.js";
import { openCliDatabase } from "./cli-database.js";

/** Where the state lives and, on PostgreSQL, what `doctor` found there. */
export interface DatabaseReport {
  backend: "local" | "postgres";
  /** the url, password masked */
  url?: string;
  schema?: string;
  /** what is wrong (form of the url, or the connection): a sentence naming the fix */
  problem?: string;
  serverVersion?: string;
  schemaVersion?: number;
  /** rows per table: the state port's tables by name (`state_rows`), other tables of the schema by table name */
  rows?: Record<string, number>;
  /** hand-off rows the owner set aside (failed too often for too long): their senders were answered, their turns never ran */
  handoffSetAside?: SetAsideHandoff[];
}

/** Rows per table of the deployment's schema; the state port's rows counted by their table's name. */
async function rowCounts(pool: pg.Pool, schema: string): Promise<Record<string, number>> {
  const rows: Record<string, number> = {};
  const tables = await pool.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY 1",
    [schema],
  );
  for (const { name } of tables.rows) {
    if (name === "schema_version") continue;
    if (name === "state_rows") {
      const byTable = await pool.query<{ tbl: string; n: number }>(
        "SELECT tbl, count(*)::int AS n FROM state_rows GROUP BY tbl ORDER BY tbl",
      );
      for (const { tbl, n } of byTable.rows) rows[tbl] = n;
      continue;
    }
    // A name from the catalogue, quoted: never text from input.
    const counted = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${pg.escapeIdentifier(name)}`);
    rows[name] = counted.rows[0]!.n;
  }
  return rows;
}

/**
 * What `doctor` says about the state's storage: for "postgres", the url's form, then a read-only
 * connection (no migrations) reporting the server version, the schema version and the row counts.
 */
export async function readDatabaseReport(
  config: Config,
  env: Record<string, string | undefined>,
): Promise<DatabaseReport> {
  if (config.state.backend === "local") return { backend: "local" };
  const target = databaseTarget(config.state, env);
  if ("problem" in target) return { backend: "postgres", problem: target.problem };
  const report: DatabaseReport = { backend: "postgres", url: maskDatabaseUrl(target.url), schema: target.schema };
  try {
    const database = await openCliDatabase(config, env, true);
    try {
      const version = await database.pool.query<{ server_version: string }>("SHOW server_version");
      const rows = await rowCounts(database.pool, target.schema);
      return {
        ...report,
        serverVersion: version.rows[0]!.server_version,
        schemaVersion: database.schemaVersion,
        rows,
        ...("inbound_handoff" in rows && { handoffSetAside: await setAsideHandoffs(database.pool) }),
      };
    } finally {
      await database.close();
    }
  } catch (err) {
    if (!isSwitchboardError(err)) throw err;
    return { ...report, problem: err.message };
  }
}

/** The report as `doctor` prints it. */
export function databaseLines(report: DatabaseReport, home: string): string[] {
  if (report.backend === "local") return [`state: local files under ${home}`];
  if (report.problem) return [`state: PostgreSQL${report.url ? ` at ${report.url}` : ""}: ${report.problem}`];
  const rows = Object.entries(report.rows ?? {});
  return [
    `state: PostgreSQL ${report.serverVersion} at ${report.url}, schema "${report.schema}" at version ${report.schemaVersion}`,
    `  rows: ${rows.length ? rows.map(([table, n]) => `${table} ${n}`).join(", ") : "none yet"}`,
    ...(report.handoffSetAside ?? []).map(
      (r) =>
        `  hand-off row ${r.id} set aside (${r.kind}${r.account ? ` ${r.account}` : ""}, ${r.dedupeKey}, ${r.attempts} attempts): ${r.reason}`,
    ),
  ];
}
