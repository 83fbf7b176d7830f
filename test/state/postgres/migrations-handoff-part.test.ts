// Migration 0013 (the hand-off rows' part, docs/scale-out.md "Inbound anywhere") on a schema at
// 0012 with rows waiting: they keep no part and are still drained; the 0011 signature of
// handoff_store (a gateway of the version before, during a rolling upgrade) still stores a row of
// no part; a row of no part whose key was forwarded with a part is a duplicate of it; the NOTIFY
// names the part.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { handoffChannel, storeHandoff, waitingHandoffs } from "../../../src/cluster/handoff-sql.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { openPostgresDatabase } from "../../../src/state/postgres/database.js";
import { loadMigrations, migrate, readSchemaVersion } from "../../../src/state/postgres/migrations.js";
import { openPostgresPool } from "../../../src/state/postgres/pool.js";
import { freshSchema, usePostgres } from "../../support/postgres.js";

const db = usePostgres();
const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** The 0011 call: eight arguments, no part. */
const storeAsBefore = (pool: pg.Pool, schema: string, key: string) =>
  pool.query("SELECT status FROM handoff_store('hook', '', $1, $2, '{}'::jsonb, 'gw-old', $3, NULL)", [
    key,
    `run-${key}`,
    handoffChannel(schema),
  ]);

describe("migration 0013 (hand-off part)", () => {
  it("applies to a schema at 0012 with waiting rows: they keep no part, are still drained, and the 0011 store still works", async () => {
    const schema = freshSchema();
    const pool = openPostgresPool({ url: db.url, schema, poolSize: 2, logger: createMemoryLogger() });
    closing.push(() => pool.end());
    await migrate(pool, { schema, logger: createMemoryLogger(), migrations: loadMigrations().slice(0, 12) });
    expect(await readSchemaVersion(pool, schema)).toBe(12);
    await storeAsBefore(pool, schema, "hook:old");
    const database = await openPostgresDatabase({ url: db.url, schema, logger: createMemoryLogger(), probeEveryMs: 0 });
    closing.push(() => database.close());
    expect(await readSchemaVersion(pool, schema)).toBe(loadMigrations().length);
    expect((await storeAsBefore(pool, schema, "hook:during-upgrade")).rows).toEqual([{ status: "new" }]);
    // The global holder drains the rows of no part; a holder of partitions only does not.
    const keys = (rows: Array<{ dedupeKey: string; part?: number | null }>) => rows.map((r) => [r.dedupeKey, r.part]);
    expect(keys(await waitingHandoffs(pool))).toEqual([
      ["hook:old", null],
      ["hook:during-upgrade", null],
    ]);
    expect(keys(await waitingHandoffs(pool, 100, "0", false, { parts: [1], global: true }))).toHaveLength(2);
    expect(await waitingHandoffs(pool, 100, "0", false, { parts: [1], global: false })).toEqual([]);
  });

  it("stores a key once without a part and once with one; a later row of no part for a forwarded key is its duplicate; NOTIFY carries the part", async () => {
    const database = await openPostgresDatabase({
      url: db.url,
      schema: freshSchema(),
      logger: createMemoryLogger(),
      probeEveryMs: 0,
    });
    closing.push(() => database.close());
    const listener = new pg.Client(database.pool.options);
    await listener.connect();
    closing.push(() => listener.end());
    const payloads: string[] = [];
    listener.on("notification", (n) => payloads.push(n.payload ?? ""));
    await listener.query(`LISTEN ${handoffChannel(database.schema)}`);
    const row = { kind: "hook" as const, dedupeKey: "hook:x", runId: "run-1", payload: {}, receivedBy: "gw" };
    expect(await storeHandoff(database.pool, database.schema, row)).toMatchObject({ status: "new" });
    const forwarded = { ...row, kind: "inbox-entry" as const, part: 5 };
    expect(await storeHandoff(database.pool, database.schema, forwarded)).toMatchObject({ status: "new" });
    expect(await storeHandoff(database.pool, database.schema, { ...forwarded, runId: "run-2" })).toMatchObject({
      status: "duplicate",
      runId: "run-1",
    });
    await database.pool.query("DELETE FROM inbound_handoff WHERE part IS NULL");
    expect(await storeHandoff(database.pool, database.schema, { ...row, runId: "run-3" })).toMatchObject({
      status: "duplicate",
      runId: "run-1",
    });
    await listener.query("SELECT 1");
    expect(payloads).toEqual(["", "5"]);
    expect(await waitingHandoffs(database.pool, 100, "0", false, { parts: [5], global: false })).toMatchObject([
      { dedupeKey: "hook:x", kind: "inbox-entry", part: 5 },
    ]);
  });
});
