// A PostgreSQL port adopting and evicting partitions while the server is away (docs/scale-out.md
// "Partitions adopted and evicted one by one"): the adopt's read and the evict's wait for the
// writes made before are waited out, never settled around.
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../../src/logger.js";
import { partOf } from "../../../src/routing/partition.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../../src/state/postgres/database.js";
import { openPostgresState } from "../../../src/state/postgres/postgres-state.js";
import { closersAfterEach } from "../../support/closed-after-each.js";
import { type PartRow as Row, sessionsTable } from "../../support/part-tables.js";
import { freshSchema, usePrivatePostgres } from "../../support/postgres.js";

// A server of its own: this test stops it.
const privateServer = usePrivatePostgres();
const logger = createMemoryLogger();
const closing = closersAfterEach();

const COUNT = 16;
const HELD = [1, 2, 3, 5, 8];
const ADOPTED = 6;
const KEYS = Array.from({ length: 60 }, (_, i) => `agent:main:telegram:dm:${i}`).filter(
  (key) => partOf(key, COUNT) === ADOPTED,
);

async function openDatabase(schema: string): Promise<PostgresDatabase> {
  const url = privateServer().url;
  const database = await openPostgresDatabase({
    url,
    schema,
    logger,
    retry: { firstMs: 20, mostMs: 200 },
    probeEveryMs: 0,
  });
  closing.push(() => database.close());
  return database;
}

/** Whether `promise` has settled, read at any time. */
function watched(promise: Promise<unknown>) {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  return () => settled;
}

describe("a PostgreSQL port adopting and evicting while the server is away", () => {
  it("waits out the server: the adopt reads its rows and the evict stores the writes made before, once the server is back", async () => {
    const schema = freshSchema();
    await (await openDatabase(schema)).pool.query("UPDATE cluster_settings SET value = $1 WHERE name = 'partitions'", [
      String(COUNT),
    ]);
    const database = await openDatabase(schema);
    const all = openPostgresState(database, { logger });
    const rows = await all.table<Row>(sessionsTable);
    await Promise.all(KEYS.map((key) => rows.set(key, { text: `row of ${key}` })));
    await all.close();
    const state = openPostgresState(database, { logger, parts: HELD });
    closing.push(() => state.close());
    const s = await state.table<Row>(sessionsTable);

    await privateServer().stop("fast");
    const adopted = state.parted!.adopt([ADOPTED]);
    const adoptSettled = watched(adopted);
    await expect.poll(() => database.health().ok).toBe(false);
    expect(adoptSettled()).toBe(false);
    await privateServer().start();
    await adopted;
    expect([...s.keys()].sort()).toEqual([...KEYS].sort());

    await privateServer().stop("fast");
    const written = s.set(KEYS[0]!, { text: "written before the evict" });
    const evicted = state.parted!.evict([ADOPTED]);
    const evictSettled = watched(evicted);
    await expect.poll(() => database.health().ok).toBe(false);
    expect(evictSettled()).toBe(false);
    expect(s.get(KEYS[0]!)).toEqual({ text: "written before the evict" });
    await privateServer().start();
    await Promise.all([evicted, written]);
    expect(s.has(KEYS[0]!)).toBe(false);
    const { rows: stored } = await database.pool.query(
      "SELECT value FROM state_rows WHERE tbl = 'sessions:main' AND key = $1",
      [KEYS[0]],
    );
    expect(stored).toEqual([{ value: { text: "written before the evict" } }]);
  }, 60_000);
});
