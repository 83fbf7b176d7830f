// A PostgreSQL state port opened for some partitions (docs/scale-out.md "The way there", step 7's
// preparation): it loads the rows of those partitions and the rows of no session, and refuses to
// write a row of another partition, so a gateway holding some partitions never overwrites the rows
// of another's.
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../../src/logger.js";
import { partOf } from "../../../src/routing/partition.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../../src/state/postgres/database.js";
import { openPostgresState } from "../../../src/state/postgres/postgres-state.js";
import type { TableSpec } from "../../../src/state/state-port.js";
import {
  cronTable as cron,
  outboxTable as outbox,
  type PartRow as Row,
  sessionsTable as sessions,
} from "../../support/part-tables.js";
import { closersAfterEach } from "../../support/closed-after-each.js";
import { freshSchema, usePostgres } from "../../support/postgres.js";

const db = usePostgres();
const logger = createMemoryLogger();
const closing = closersAfterEach();

const COUNT = 16;
const HELD = [1, 2, 3, 5, 8];
const keyOf = (i: number) => `agent:main:telegram:dm:${i}`;
const KEYS = Array.from({ length: 40 }, (_, i) => keyOf(i));
const held = (key: string) => HELD.includes(partOf(key, COUNT));

async function openDatabase(schema: string): Promise<PostgresDatabase> {
  const database = await openPostgresDatabase({ url: db.url, schema, logger, probeEveryMs: 0 });
  closing.push(() => database.close());
  return database;
}

/** A schema of 16 partitions with rows of every kind written by a port holding all of them, two rows stored without a part. */
async function schemaWithRows() {
  const schema = freshSchema();
  await (await openDatabase(schema)).pool.query("UPDATE cluster_settings SET value = $1 WHERE name = 'partitions'", [
    String(COUNT),
  ]);
  const database = await openDatabase(schema);
  const state = openPostgresState(database, { logger });
  const [s, o, c] = await Promise.all([sessions, outbox, cron].map((spec) => state.table<Row>(spec)));
  for (const key of KEYS) s!.set(key, { text: `row of ${key}` });
  for (const [i, key] of KEYS.entries()) o!.set(`item-${i}`, { session: key, text: "reply" });
  o!.set("item-none", { text: "of no session" });
  c!.set("nightly", { text: "a job" });
  await state.close();
  // Rows stored before migration 0008 (no part): one of a held partition, one of another.
  const unheldOld = Array.from({ length: 40 }, (_, i) => `agent:main:telegram:dm:old-${i}`);
  const old = [unheldOld.find(held)!, unheldOld.find((key) => !held(key))!];
  for (const key of old)
    await database.pool.query("INSERT INTO state_rows (tbl, key, value) VALUES ('sessions:main', $1, $2)", [
      key,
      JSON.stringify({ text: "stored before parts" }),
    ]);
  return { database, old };
}

describe("a PostgreSQL state port opened for some partitions", () => {
  it("loads exactly the rows of those partitions and the rows of no session, and gives rows stored without a part theirs", async () => {
    const { database, old } = await schemaWithRows();
    const state = openPostgresState(database, { logger, parts: HELD });
    closing.push(() => state.close());
    const s = await state.table<Row>(sessions);
    const o = await state.table<Row>(outbox);
    const c = await state.table<Row>(cron);
    expect(HELD.length).toBeLessThan(COUNT);
    expect([...s.keys()].sort()).toEqual([...KEYS.filter(held), old[0]!].sort());
    expect(KEYS.filter(held).length).toBeGreaterThan(0);
    expect(KEYS.filter((key) => !held(key)).length).toBeGreaterThan(0);
    expect([...o.keys()].sort()).toEqual(
      [...KEYS.flatMap((key, i) => (held(key) ? [`item-${i}`] : [])), "item-none"].sort(),
    );
    expect([...c.keys()]).toEqual(["nightly"]);
    // Both old rows got their part (the same any gateway computes); only the held one is in the image.
    const { rows } = await database.pool.query<{ key: string; part: number }>(
      "SELECT key, part FROM state_rows WHERE tbl = 'sessions:main' AND key = ANY($1) ORDER BY key",
      [old],
    );
    expect(rows).toEqual(
      old.map((key) => ({ key, part: partOf(key, COUNT) })).sort((a, b) => (a.key < b.key ? -1 : 1)),
    );
  });

  it("refuses a write or removal of a row of a partition it did not open, and leaves that row as stored", async () => {
    const { database } = await schemaWithRows();
    const state = openPostgresState(database, { logger, parts: HELD });
    closing.push(() => state.close());
    const s = await state.table<Row>(sessions);
    const o = await state.table<Row>(outbox);
    const mine = KEYS.find(held)!;
    const theirs = KEYS.find((key) => !held(key))!;
    const refused = new RegExp(
      `row "${theirs}" belongs to partition ${partOf(theirs, COUNT)}, not one of the partitions this port holds \\(1-3, 5, 8\\)`,
    );
    expect(() => s.set(theirs, { text: "overwritten" })).toThrow(refused);
    expect(() => s.delete(theirs)).toThrow(/is not among the rows of the partitions this port holds/);
    expect(() => o.set("item-new", { session: theirs, text: "reply" })).toThrow(/belongs to partition/);
    expect(s.get(theirs)).toBeUndefined();
    await s.set(mine, { text: "written" });
    await o.set("item-new", { session: mine, text: "reply" });
    await o.set("item-none-2", { text: "of no session" });
    await (await state.table<Row>(cron)).set("hourly", { text: "a job" });
    const stored = async (tbl: string, key: string) =>
      (await database.pool.query("SELECT value FROM state_rows WHERE tbl = $1 AND key = $2", [tbl, key])).rows[0]
        ?.value;
    expect(await stored("sessions:main", theirs)).toEqual({ text: `row of ${theirs}` });
    expect(await stored("sessions:main", mine)).toEqual({ text: "written" });
    expect(await stored("outbox", "item-new")).toEqual({ session: mine, text: "reply" });
    expect(await stored("cron-jobs", "hourly")).toEqual({ text: "a job" });
  });

  it("rewrites only the rows it loaded when its check drops one: the rows of other partitions stay stored", async () => {
    const { database, old } = await schemaWithRows();
    const bad = Array.from({ length: 40 }, (_, i) => `agent:main:telegram:dm:x${i}`).find(held)!;
    await database.pool.query("INSERT INTO state_rows (tbl, key, value, part) VALUES ('sessions:main', $1, $2, $3)", [
      bad,
      JSON.stringify({ text: "bad" }),
      partOf(bad, COUNT),
    ]);
    const dropping: TableSpec<Row> = {
      ...sessions,
      check: (_key, row) => ((row as Row).text === "bad" ? { error: "bad row" } : { value: row as Row }),
      invalidRows: "drop",
    };
    const state = openPostgresState(database, { logger, parts: HELD });
    closing.push(() => state.close());
    expect((await state.table<Row>(dropping)).has(bad)).toBe(false);
    const { rows } = await database.pool.query<{ key: string }>(
      "SELECT key FROM state_rows WHERE tbl = 'sessions:main'",
    );
    expect(rows.map((row) => row.key).sort()).toEqual([...KEYS, ...old].sort());
  });

  it("opens every row with every partition (the default), and refuses a partition the schema does not have", async () => {
    const { database, old } = await schemaWithRows();
    const all = openPostgresState(database, { logger, parts: Array.from({ length: COUNT }, (_, i) => i) });
    closing.push(() => all.close());
    expect([...(await all.table<Row>(sessions)).keys()].sort()).toEqual([...KEYS, ...old].sort());
    expect(() => openPostgresState(database, { logger, parts: [3, 16] })).toThrow(
      /partitions to open must be whole numbers from 0 to 15 \(the schema's count is 16\); got 16/,
    );
  });
});
