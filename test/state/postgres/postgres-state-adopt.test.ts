// A PostgreSQL state port opened for some partitions adopts and evicts partitions while it runs
// (docs/scale-out.md "Partitions adopted and evicted one by one"): an adopt loads exactly the rows
// of the adopted partitions into the open tables and hands them to each store (onAdopt); an evict
// refuses their writes at once, stores the writes made before, and takes their rows out (onEvict).
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../../src/logger.js";
import { partOf } from "../../../src/routing/partition.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../../src/state/postgres/database.js";
import { openPostgresState } from "../../../src/state/postgres/postgres-state.js";
import type { TableSpec } from "../../../src/state/state-port.js";
import { closersAfterEach } from "../../support/closed-after-each.js";
import { cronTable as cron, outboxTable, type PartRow as Row, sessionsTable } from "../../support/part-tables.js";
import { freshSchema, usePostgres } from "../../support/postgres.js";

const db = usePostgres();
const logger = createMemoryLogger();
const closing = closersAfterEach();

const COUNT = 16;
const HELD = [1, 2, 3, 5, 8];
/** A partition not held with several rows of KEYS. */
const ADOPTED = 6;
const KEYS = Array.from({ length: 60 }, (_, i) => `agent:main:telegram:dm:${i}`);
const partOfKey = (key: string) => partOf(key, COUNT);
const keysOf = (parts: number[]) => KEYS.filter((key) => parts.includes(partOfKey(key)));
/** A row of partition ADOPTED whose check fails (kept aside as invalid). */
const BAD = Array.from({ length: 60 }, (_, i) => `agent:main:telegram:dm:bad-${i}`).find(
  (key) => partOfKey(key) === ADOPTED,
)!;

/** A per-session table that records what its store is told, and keeps rows whose text is "bad" aside as invalid. */
function recorded(spec: TableSpec<Row>) {
  const told = {
    adopted: [] as Array<Array<readonly [string, Row]>>,
    evicted: [] as Array<Array<readonly [string, Row]>>,
  };
  const table: TableSpec<Row> = {
    ...spec,
    check: (_key, row) => ((row as Row).text === "bad" ? { error: "bad row" } : { value: row as Row }),
    onAdopt: (rows) => told.adopted.push([...rows]),
    onEvict: (rows) => told.evicted.push([...rows]),
  };
  return { spec: table, told };
}

async function openDatabase(schema: string): Promise<PostgresDatabase> {
  const database = await openPostgresDatabase({ url: db.url, schema, logger, probeEveryMs: 0 });
  closing.push(() => database.close());
  return database;
}

/** A schema of 16 partitions with session rows, outbox items and a cron job, written by a port holding all. */
async function schemaWithRows() {
  const schema = freshSchema();
  await (await openDatabase(schema)).pool.query("UPDATE cluster_settings SET value = $1 WHERE name = 'partitions'", [
    String(COUNT),
  ]);
  const database = await openDatabase(schema);
  const state = openPostgresState(database, { logger });
  const [s, o, c] = await Promise.all([sessionsTable, outboxTable, cron].map((spec) => state.table<Row>(spec)));
  for (const key of KEYS) s!.set(key, { text: `row of ${key}` });
  for (const [i, key] of KEYS.entries()) o!.set(`item-${i}`, { session: key, text: "reply" });
  s!.set(BAD, { text: "bad" });
  c!.set("nightly", { text: "a job" });
  await state.close();
  return database;
}

/** A port holding HELD with the sessions and outbox tables open, recording what they are told. */
async function heldPort(database: PostgresDatabase, parts = HELD) {
  const state = openPostgresState(database, { logger, parts });
  closing.push(() => state.close());
  const sessions = recorded(sessionsTable);
  const outbox = recorded(outboxTable);
  return {
    state,
    parted: state.parted!,
    s: await state.table<Row>(sessions.spec),
    o: await state.table<Row>(outbox.spec),
    sessions: sessions.told,
    outbox: outbox.told,
  };
}

const stored = async (database: PostgresDatabase, key: string) =>
  (
    await database.pool.query<{ value: Row; part: number | null }>(
      "SELECT value, part FROM state_rows WHERE tbl = 'sessions:main' AND key = $1",
      [key],
    )
  ).rows[0];

const refusedFor = (key: string, shown: string) =>
  new RegExp(
    `row "${key}" belongs to partition ${partOfKey(key)}, not one of the partitions this port holds \\(${shown}\\)`,
  );

describe("a PostgreSQL state port adopting and evicting partitions", () => {
  it("adopts exactly the rows of the adopted partitions, valid and invalid, and hands the valid ones to onAdopt once", async () => {
    const database = await schemaWithRows();
    const { parted, s, o, sessions, outbox, state } = await heldPort(database);
    const c = await state.table<Row>({ ...cron, onAdopt: () => expect.unreachable("cron is of no session") });
    expect([...s.keys()].sort()).toEqual(keysOf(HELD).sort());
    expect(keysOf([ADOPTED, 9]).length).toBeGreaterThan(1);
    await parted.adopt([ADOPTED, 9]);
    expect([...parted.held()].sort((a, b) => a - b)).toEqual([1, 2, 3, 5, ADOPTED, 8, 9]);
    expect([...s.keys()].sort()).toEqual(keysOf([...HELD, ADOPTED, 9]).sort());
    expect(s.isInvalid(BAD)).toBe(true);
    expect(sessions.adopted).toEqual([keysOf([ADOPTED, 9]).map((key) => [key, { text: `row of ${key}` }])]);
    const items = KEYS.flatMap((key, i) => ([ADOPTED, 9].includes(partOfKey(key)) ? [`item-${i}`] : []));
    expect(outbox.adopted.map((rows) => rows.map(([key]) => key))).toEqual([items]);
    expect([...c.keys()]).toEqual(["nightly"]);
    expect([...o.keys()]).toEqual(expect.arrayContaining(items));
  });

  it("stores the writes of an adopted partition; an evict refuses them at once, naming the row and the set, stores the writes made before and hands the rows to onEvict", async () => {
    const database = await schemaWithRows();
    const { parted, s, sessions } = await heldPort(database);
    await parted.adopt([ADOPTED]);
    const [first, second] = keysOf([ADOPTED]);
    await s.set(first!, { text: "written after the adopt" });
    expect(await stored(database, first!)).toEqual({ value: { text: "written after the adopt" }, part: ADOPTED });
    void s.set(second!, { text: "written just before the evict" });
    const evicted = parted.evict([ADOPTED]);
    expect(() => s.set(first!, { text: "after the evict" })).toThrow(refusedFor(first!, "1-3, 5, 8"));
    await evicted;
    expect(await stored(database, second!)).toEqual({
      value: { text: "written just before the evict" },
      part: ADOPTED,
    });
    expect(sessions.evicted.length).toBe(1);
    expect(new Map(sessions.evicted[0])).toEqual(
      new Map(
        keysOf([ADOPTED]).map((key) => [
          key,
          {
            text:
              key === first
                ? "written after the adopt"
                : key === second
                  ? "written just before the evict"
                  : `row of ${key}`,
          },
        ]),
      ),
    );
    expect([...s.keys()].sort()).toEqual(keysOf(HELD).sort());
    expect(s.has(BAD)).toBe(false);
    expect(() => s.delete(second!)).toThrow(/is not among the rows of the partitions this port holds \(1-3, 5, 8\)/);
    expect(await stored(database, first!)).toEqual({ value: { text: "written after the adopt" }, part: ADOPTED });
  });

  it("sees at adopt the rows another port wrote and removed while it did not hold their partition", async () => {
    const database = await schemaWithRows();
    const { parted, s } = await heldPort(database);
    const other = await heldPort(database, [ADOPTED]);
    const [changed, removed] = keysOf([ADOPTED]);
    const added = Array.from({ length: 60 }, (_, i) => `agent:main:telegram:dm:new-${i}`).find(
      (key) => partOfKey(key) === ADOPTED,
    )!;
    await Promise.all([
      other.s.set(changed!, { text: "changed by the other" }),
      other.s.delete(removed!),
      other.s.set(added, { text: "added by the other" }),
    ]);
    await other.parted.evict([ADOPTED]);
    await parted.adopt([ADOPTED]);
    expect(s.get(changed!)).toEqual({ text: "changed by the other" });
    expect(s.has(removed!)).toBe(false);
    expect(s.get(added)).toEqual({ text: "added by the other" });
  });

  it("loads the adopted partitions' rows into a table opened after the adopt, and not the evicted ones", async () => {
    const database = await schemaWithRows();
    const state = openPostgresState(database, { logger, parts: HELD });
    closing.push(() => state.close());
    await state.parted!.adopt([ADOPTED]);
    await state.parted!.evict([1]);
    const outbox = await state.table<Row>(outboxTable);
    const items = KEYS.flatMap((key, i) => ([2, 3, 5, ADOPTED, 8].includes(partOfKey(key)) ? [`item-${i}`] : []));
    expect([...outbox.keys()].sort()).toEqual(items.sort());
  });

  it("moves a table whose open is under way: it ends with the adopted partition's rows and without the evicted one's", async () => {
    const database = await schemaWithRows();
    // The adopt and the evict are called while the table's load reads the rows of the set before them.
    let moves: Promise<unknown> | undefined;
    let duringLoad: (() => void) | undefined;
    const watched: PostgresDatabase = {
      ...database,
      transaction: (fn, options) => {
        if (options?.readOnly && duringLoad) queueMicrotask(duringLoad);
        duringLoad = undefined;
        return database.transaction(fn, options);
      },
    };
    const state = openPostgresState(watched, { logger, parts: HELD });
    closing.push(() => state.close());
    duringLoad = () => {
      moves = Promise.all([state.parted!.adopt([ADOPTED]), state.parted!.evict([1])]);
    };
    const sessions = recorded(sessionsTable);
    const s = await state.table<Row>(sessions.spec);
    await moves;
    expect([...s.keys()].sort()).toEqual(keysOf([2, 3, 5, ADOPTED, 8]).sort());
    expect(sessions.told.adopted.flat().map(([key]) => key)).toEqual(keysOf([ADOPTED]));
    expect(sessions.told.evicted.flat().map(([key]) => key)).toEqual(keysOf([1]));
  });

  it("takes a write racing the adopt and keeps it over the row the adopt read", async () => {
    const database = await schemaWithRows();
    const [raced] = keysOf([ADOPTED]);
    // The write lands while the adopt's read is under way: after the writes made before were stored.
    let duringRead: (() => void) | undefined;
    const watched: PostgresDatabase = {
      ...database,
      transaction: (fn, options) => {
        if (options?.readOnly && duringRead) queueMicrotask(duringRead);
        duringRead = undefined;
        return database.transaction(fn, options);
      },
    };
    const { parted, s, sessions } = await heldPort(watched);
    let written: Promise<void> | undefined;
    duringRead = () => {
      written = s.set(raced!, { text: "written during the read" });
    };
    await parted.adopt([ADOPTED]);
    await written;
    expect(s.get(raced!)).toEqual({ text: "written during the read" });
    expect(sessions.adopted[0]!.map(([key]) => key)).not.toContain(raced);
    expect(await stored(database, raced!)).toEqual({ value: { text: "written during the read" }, part: ADOPTED });
  });

  it("does nothing on an adopt of partitions it holds, and has no parted when opened for every partition by default", async () => {
    const database = await schemaWithRows();
    const { parted, s, sessions } = await heldPort(database);
    const [mine] = keysOf([1]);
    const written = s.set(mine!, { text: "written before" });
    await parted.adopt([1, 2]);
    await written;
    expect(sessions.adopted).toEqual([]);
    expect(s.get(mine!)).toEqual({ text: "written before" });
    expect([...parted.held()].sort((a, b) => a - b)).toEqual(HELD);
    await expect(parted.adopt([16])).rejects.toThrow(/partitions to open must be whole numbers from 0 to 15/);
    expect(openPostgresState(database, { logger }).parted).toBeUndefined();
  });

  it("leaves rows stored without a part to every set on a partition owner without the global lease: an adopt reads none, an evict takes none out", async () => {
    const database = await schemaWithRows();
    const unset = (part: number) =>
      Array.from({ length: 60 }, (_, i) => `agent:main:telegram:dm:old-${i}`).find((key) => partOfKey(key) === part)!;
    const [mine, theirs] = [unset(1), unset(ADOPTED)];
    for (const key of [mine, theirs])
      await database.pool.query("INSERT INTO state_rows (tbl, key, value) VALUES ('sessions:main', $1, $2)", [
        key,
        JSON.stringify({ text: "stored before parts" }),
      ]);
    const { parted, s } = await heldPort({ ...database, global: false });
    expect(s.has(mine)).toBe(true);
    await parted.adopt([ADOPTED]);
    expect(s.has(theirs)).toBe(false);
    await parted.evict([1]);
    expect(s.get(mine)).toEqual({ text: "stored before parts" });
    expect(s.has(keysOf([1])[0]!)).toBe(false);
  });

  it("holds none of the partitions of an adopt whose read fails: their writes are refused again, and the rows written meanwhile leave the image", async () => {
    const database = await schemaWithRows();
    let failNext = false;
    const failing: PostgresDatabase = {
      ...database,
      transaction: (fn, options) => {
        if (!options?.readOnly || !failNext) return database.transaction(fn, options);
        failNext = false;
        return Promise.reject(new Error("the read failed"));
      },
    };
    const { parted, s, sessions } = await heldPort(failing);
    const [first, second] = keysOf([ADOPTED]);
    failNext = true;
    const adopted = parted.adopt([ADOPTED]);
    const written = s.set(first!, { text: "written as it adopts" });
    await expect(adopted).rejects.toThrow("the read failed");
    await written;
    expect([...parted.held()].sort((a, b) => a - b)).toEqual(HELD);
    expect(s.has(first!)).toBe(false);
    expect(sessions.evicted).toEqual([[[first, { text: "written as it adopts" }]]]);
    expect(() => s.set(second!, { text: "refused" })).toThrow(refusedFor(second!, "1-3, 5, 8"));
    await parted.adopt([ADOPTED]);
    expect([...s.keys()].sort()).toEqual(keysOf([...HELD, ADOPTED]).sort());
    expect(s.get(first!)).toEqual({ text: "written as it adopts" });
  });
});
