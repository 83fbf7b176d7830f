import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../../src/logger.js";
import { loadMigrations, migrate, readSchemaVersion } from "../../../src/state/postgres/migrations.js";
import { openPostgresPool } from "../../../src/state/postgres/pool.js";
import { freshSchema, usePostgres } from "../../support/postgres.js";

const db = usePostgres();
const pools: pg.Pool[] = [];

function poolOn(schema: string): pg.Pool {
  const pool = openPostgresPool({ url: db.url, schema, poolSize: 2, logger: createMemoryLogger() });
  pools.push(pool);
  return pool;
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.end()));
});

describe("PostgreSQL migrations", () => {
  it("creates the schema, applies every migration once, and a second start applies nothing", async () => {
    const latest = loadMigrations().length;
    const pool = poolOn(db.schema);
    expect(await migrate(pool, { schema: db.schema, logger: createMemoryLogger() })).toEqual({ from: 0, to: latest });
    expect(await migrate(pool, { schema: db.schema, logger: createMemoryLogger() })).toEqual({
      from: latest,
      to: latest,
    });
    expect(await readSchemaVersion(pool, db.schema)).toBe(latest);
    // The tables are in the deployment's schema, found through the pool's search_path.
    const tables = await pool.query("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [
      db.schema,
    ]);
    expect(tables.rows.map((row) => row.table_name).sort()).toEqual([
      "cluster_leases",
      "cluster_members",
      "cluster_settings",
      "hook_auth_failures",
      "inbound_handoff",
      "outbox_lanes",
      "run_results",
      "schema_version",
      "state_rows",
      "transcript_events",
      "transcripts",
      "workspace_files",
    ]);
  });

  it("applies each migration exactly once when eight processes' pools start together", async () => {
    const schema = freshSchema();
    const results = await Promise.all(
      Array.from({ length: 8 }, () => migrate(poolOn(schema), { schema, logger: createMemoryLogger() })),
    );
    const latest = loadMigrations().length;
    expect(results.filter((result) => result.from === 0)).toHaveLength(1);
    expect(results.every((result) => result.to === latest)).toBe(true);
    const applied = await poolOn(schema).query("SELECT version FROM schema_version ORDER BY version");
    expect(applied.rows.map((row) => row.version)).toEqual(Array.from({ length: latest }, (_, i) => i + 1));
  });

  it("refuses a database a newer switchboard migrated, saying so", async () => {
    const schema = freshSchema();
    const pool = poolOn(schema);
    await migrate(pool, { schema, logger: createMemoryLogger() });
    await pool.query("INSERT INTO schema_version (version, name) VALUES (999, 'from_the_future')");
    await expect(migrate(pool, { schema, logger: createMemoryLogger() })).rejects.toThrow(
      `the PostgreSQL schema "${schema}" is at version 999, but this switchboard knows versions up to ${loadMigrations().length}`,
    );
  });

  it("keeps deployments apart: two schemas in one database each have their own tables and version", async () => {
    const [a, b] = [freshSchema(), freshSchema()];
    await migrate(poolOn(a), { schema: a, logger: createMemoryLogger() });
    await poolOn(a).query("INSERT INTO state_rows (tbl, key, value) VALUES ('outbox', 'x', '{}')");
    await migrate(poolOn(b), { schema: b, logger: createMemoryLogger() });
    expect((await poolOn(b).query("SELECT count(*)::int AS n FROM state_rows")).rows[0].n).toBe(0);
  });

  it("rolls a failing migration back whole and names it", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "sb-migrations-"));
    try {
      await writeFile(path.join(dir, "0001_good.sql"), "CREATE TABLE good (id int);");
      await writeFile(path.join(dir, "0002_bad.sql"), "CREATE TABLE half (id int); SELECT no_such_function();");
      const schema = freshSchema();
      const pool = poolOn(schema);
      const migrations = loadMigrations(dir);
      await expect(migrate(pool, { schema, logger: createMemoryLogger(), migrations })).rejects.toThrow(
        "migration 0002_bad failed",
      );
      expect(await readSchemaVersion(pool, schema)).toBe(1);
      expect((await pool.query("SELECT to_regclass('half') AS t")).rows[0].t).toBeNull();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses migration files with a gap in their numbers", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "sb-migrations-"));
    try {
      await writeFile(path.join(dir, "0001_a.sql"), "SELECT 1;");
      await writeFile(path.join(dir, "0003_c.sql"), "SELECT 1;");
      expect(() => loadMigrations(dir)).toThrow("without gaps: found 3 at 2");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
