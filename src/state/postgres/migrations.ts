import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import type pg from "pg";
import { InternalError, SwitchboardError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { assertSchemaName } from "./pool.js";

/** One migration: `migrations/NNNN_<name>.sql`, applied once, in order, forward only. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * The migrations folder, read at run time. The CLI's build (bin/cli-build.mjs) points
 * `import.meta.dirname` back at this folder of the sources, so the bundle and the sources read the
 * same files: nothing is copied, nothing can be stale.
 */
const MIGRATIONS_DIR = path.resolve(import.meta.dirname, "migrations");
const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** The migrations in `dir`, in order; numbers must run 1, 2, 3... with no gap or repeat (a bug otherwise). */
export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const migrations = readdirSync(dir)
    .filter((file) => file.endsWith(".sql"))
    .map((file) => {
      const match = FILE_NAME.exec(file);
      if (!match) throw new InternalError(`migration file ${file} is not named NNNN_<name>.sql`);
      return { version: Number(match[1]), name: match[2]!, sql: readFileSync(path.join(dir, file), "utf8") };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((migration, i) => {
    if (migration.version !== i + 1)
      throw new InternalError(
        `migrations must be numbered 0001, 0002, ... without gaps: found ${migration.version} at ${i + 1}`,
      );
  });
  return migrations;
}

/** The advisory lock key of a schema's migrations: two processes migrating one schema take turns. */
function lockKey(schema: string): string {
  return createHash("sha256").update(`switchboard:migrations:${schema}`).digest().readBigInt64BE().toString();
}

/** The schema's version: the last migration applied, 0 when the schema or its version table is missing. */
export async function readSchemaVersion(db: pg.Pool | pg.PoolClient, schema: string): Promise<number> {
  const found = await db.query<{ version: number | null }>(
    `SELECT CASE WHEN to_regclass(format('%I.schema_version', $1::text)) IS NULL THEN 0 END AS version`,
    [schema],
  );
  if (found.rows[0]!.version === 0) return 0;
  const max = await db.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${schema}.schema_version`,
  );
  return max.rows[0]!.version ?? 0;
}

/** The error for a database that a newer switchboard migrated. */
function newerThanCode(schema: string, version: number, known: number): SwitchboardError {
  return new SwitchboardError(
    "DATABASE_UNAVAILABLE",
    `the PostgreSQL schema "${schema}" is at version ${version}, but this switchboard knows versions up to ${known}: ` +
      "a newer switchboard migrated it; run that version here too (migrations only go forward)",
  );
}

async function applyOne(client: pg.PoolClient, schema: string, migration: Migration): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query(migration.sql);
    await client.query(`INSERT INTO ${schema}.schema_version (version, name) VALUES ($1, $2)`, [
      migration.version,
      migration.name,
    ]);
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK");
    throw new InternalError(`migration ${String(migration.version).padStart(4, "0")}_${migration.name} failed`, {
      cause: err,
    });
  }
}

/** What {@link migrate} did. */
export interface MigrateResult {
  /** the schema's version before */
  from: number;
  /** ...and after */
  to: number;
}

/**
 * Brings `schema` to the newest migration: creates it when missing, then applies each migration not
 * yet applied, each in its own transaction with its row in `schema_version`. Runs under an advisory
 * lock on the schema (freed if this process dies), so gateways starting together never race.
 * Refuses a schema newer than the code. The pool's `search_path` must be `schema` (openPostgresPool).
 */
export async function migrate(
  pool: pg.Pool,
  options: { schema: string; logger: Logger; migrations?: Migration[] },
): Promise<MigrateResult> {
  const { schema, logger } = options;
  assertSchemaName(schema);
  const migrations = options.migrations ?? loadMigrations();
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("SELECT pg_advisory_lock($1::bigint)", [lockKey(schema)]);
    try {
      const exists = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
      if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${schema}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${schema}.schema_version (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const from = await readSchemaVersion(client, schema);
      if (from > migrations.length) throw newerThanCode(schema, from, migrations.length);
      for (const migration of migrations.slice(from)) {
        await applyOne(client, schema, migration);
        logger.info({ schema, version: migration.version, migration: migration.name }, "applied a database migration");
      }
      return { from, to: Math.max(from, migrations.length) };
    } finally {
      await client.query("SELECT pg_advisory_unlock($1::bigint)", [lockKey(schema)]);
    }
  } catch (err) {
    broken = err as Error;
    throw err;
  } finally {
    // A connection that failed mid-way is dropped (its session lock goes with it), never reused.
    client.release(broken);
  }
}
