// Migration 0014 (docs/scale-out.md "N owners"): the inbox's pending rows indexed by run id, so
// agent.wait on a partition core and cron's wait for a forwarded run read one row, not every inbox
// row of the schema; and the member's `cluster.owners` column (older members keep NULL). The plans
// are those of the real reads (each read's SQL run under EXPLAIN on a schema of 20,000 inbox rows).
import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { announceOfRun, handedOffRun } from "../../../src/cluster/run-results-sql.js";
import { storedPendingRun } from "../../../src/gateway/committed-reads.js";
import { createMemoryLogger } from "../../../src/logger.js";
import type { PostgresDatabase } from "../../../src/state/postgres/database.js";
import { loadMigrations, migrate, readSchemaVersion } from "../../../src/state/postgres/migrations.js";
import { openPostgresPool } from "../../../src/state/postgres/pool.js";
import { freshSchema, usePostgres } from "../../support/postgres.js";

const db = usePostgres();
const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** A schema at 0013 with `rows` done inbox entries (each naming a run) and one pending, and a member row. */
async function schemaAt13(rows: number) {
  const schema = freshSchema();
  const pool = openPostgresPool({ url: db.url, schema, poolSize: 2, logger: createMemoryLogger() });
  closing.push(() => pool.end());
  await migrate(pool, { schema, logger: createMemoryLogger(), migrations: loadMigrations().slice(0, 13) });
  expect(await readSchemaVersion(pool, schema)).toBe(13);
  await pool.query(
    `INSERT INTO state_rows (tbl, key, value)
     SELECT 'inbox', 'telegram:' || i, jsonb_build_object('status', 'done', 'runId', 'run-' || i, 'receivedAt', i, 'at', i)
     FROM generate_series(1, $1) AS i`,
    [rows],
  );
  await pool.query(
    `INSERT INTO state_rows (tbl, key, value) VALUES ('inbox', 'telegram:pending',
     '{"status":"pending","runId":"run-pending","sessionKey":"agent:main:telegram:dm:1","receivedAt":5}'),
     ('inbox', 'turn:t', '{"status":"pending","turn":"run-turn","session":"agent:main:x","receivedAt":6}')`,
  );
  await pool.query(
    "INSERT INTO cluster_members (node_id, incarnation, host, pid, port, lock_key) VALUES ('gw-old', 'gw-old-1', 'h', 1, 1, 1)",
  );
  await pool.query("ANALYZE state_rows");
  return { schema, pool };
}

/** Each real read's SQL, planned instead of run: the plans' text. */
async function plans(pool: pg.Pool): Promise<string[]> {
  const seen: string[] = [];
  const explaining = {
    query: async (text: string, values: unknown[]) => {
      const { rows } = await pool.query(`EXPLAIN (FORMAT JSON) ${text}`, values);
      seen.push(JSON.stringify(rows));
      return { rows: [] };
    },
  };
  await handedOffRun(explaining as unknown as pg.Pool, "run-pending");
  await announceOfRun(explaining as unknown as pg.Pool, "run-pending");
  const database = { transaction: (fn: (client: unknown) => unknown) => fn(explaining) };
  await storedPendingRun(database as unknown as PostgresDatabase, "run-turn");
  return seen;
}

describe("migration 0014 (inbox run-id index, member mode)", () => {
  it("finds a pending run by its id through the new indexes, not a scan of every inbox row", async () => {
    const { schema, pool } = await schemaAt13(20_000);
    const seqScan = /"Node Type":"Seq Scan"[^{}]*"Relation Name":"state_rows"/;
    for (const plan of await plans(pool)) expect(plan).toMatch(seqScan);
    await migrate(pool, { schema, logger: createMemoryLogger() });
    expect(await readSchemaVersion(pool, schema)).toBe(loadMigrations().length);
    await pool.query("ANALYZE state_rows");
    const [handedOff, announce, stored] = await plans(pool);
    expect(handedOff).toContain("state_rows_inbox_pending_run");
    expect(announce).toContain("state_rows_inbox_pending_run");
    expect(stored).toContain("state_rows_inbox_pending_run");
    expect(stored).toContain("state_rows_inbox_pending_turn");
    for (const plan of [handedOff, announce, stored]) expect(plan).not.toMatch(seqScan);
    // The reads answer as before.
    expect(await handedOffRun(pool, "run-pending")).toEqual({ sessionKey: "agent:main:telegram:dm:1", queuedAt: 5 });
    expect(await handedOffRun(pool, "run-7")).toBeUndefined();
    expect(await announceOfRun(pool, "run-pending")).toEqual({ pending: true, announced: false });
  });

  it("adds the member's mode: a member of the version before keeps none", async () => {
    const { schema, pool } = await schemaAt13(1);
    await migrate(pool, { schema, logger: createMemoryLogger() });
    const { rows } = await pool.query("SELECT node_id, owners FROM cluster_members");
    expect(rows).toEqual([{ node_id: "gw-old", owners: null }]);
  });
});
