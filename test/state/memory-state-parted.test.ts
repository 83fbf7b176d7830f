// The memory port opened for some partitions (`parts`) adopts and evicts partitions as the
// PostgreSQL port does (docs/scale-out.md "Partitions adopted and evicted one by one"; the same
// behaviours on a real server: test/state/postgres/postgres-state-adopt.test.ts). Unit tests of the
// stores' onAdopt/onEvict hooks run on it.
import { describe, expect, it } from "vitest";
import { partOf } from "../../src/routing/partition.js";
import { type MemoryStateData, openMemoryState } from "../../src/state/memory-state.js";
import type { TableSpec } from "../../src/state/state-port.js";
import {
  type PartRow as Row,
  cronTable as cron,
  outboxTable as outbox,
  sessionsTable as sessions,
} from "../support/part-tables.js";

// The memory port keeps a table by its path: one each.
const sessionsTable: TableSpec<Row> = { ...sessions, path: "sessions.json" };
const outboxTable: TableSpec<Row> = { ...outbox, path: "outbox.json" };
const cronTable: TableSpec<Row> = { ...cron, path: "cron.json" };

const COUNT = 16;
const HELD = [1, 2, 3, 5, 8];
/** A partition not held with several rows of KEYS. */
const ADOPTED = 6;
const of = (key: string) => partOf(key, COUNT);
const KEYS = Array.from({ length: 60 }, (_, i) => `agent:main:telegram:dm:${i}`);
const keysOf = (parts: number[]) => KEYS.filter((key) => parts.includes(of(key)));
const BAD = "agent:main:telegram:dm:bad";

/** The memory port's tables (by path) as a port holding every partition wrote them. */
async function dataWithRows(): Promise<MemoryStateData> {
  const data: MemoryStateData = new Map();
  const all = openMemoryState({ data });
  const [s, o, c] = await Promise.all([sessionsTable, outboxTable, cronTable].map((spec) => all.table<Row>(spec)));
  for (const key of KEYS) await s!.set(key, { text: `row of ${key}` });
  for (const [i, key] of KEYS.entries()) await o!.set(`item-${i}`, { session: key, text: "reply" });
  await s!.set(BAD, { text: "bad" });
  await c!.set("nightly", { text: "a job" });
  await all.close();
  return data;
}

/** A per-session table recording what its store is told; rows whose text is "bad" fail the check (kept aside). */
function recorded(spec: TableSpec<Row>) {
  const told = { adopted: [] as Array<[string, Row]>[], evicted: [] as Array<[string, Row]>[] };
  const table: TableSpec<Row> = {
    ...spec,
    check: (_key, row) => ((row as Row).text === "bad" ? { error: "bad row" } : { value: row as Row }),
    onAdopt: (rows) => told.adopted.push(rows.map(([key, row]) => [key, row])),
    onEvict: (rows) => told.evicted.push(rows.map(([key, row]) => [key, row])),
  };
  return { spec: table, told };
}

async function heldPort(data: MemoryStateData, held = HELD) {
  const state = openMemoryState({ data, parts: { of, held } });
  const sessions = recorded(sessionsTable);
  const outbox = recorded(outboxTable);
  const s = await state.table<Row>(sessions.spec);
  const o = await state.table<Row>(outbox.spec);
  return { state, parted: state.parted!, s, o, sessions: sessions.told, outbox: outbox.told };
}

describe("the memory port adopting and evicting partitions", () => {
  it("adopts exactly the rows of the adopted partitions and hands them to onAdopt once; a table of no session is untouched", async () => {
    const { state, parted, s, o, sessions, outbox } = await heldPort(await dataWithRows());
    const c = await state.table<Row>({ ...cronTable, onAdopt: () => expect.unreachable("cron is of no session") });
    expect([...s.keys()].sort()).toEqual(keysOf(HELD).sort());
    await parted.adopt([ADOPTED, 9]);
    expect([...parted.held()].sort((a, b) => a - b)).toEqual([1, 2, 3, 5, ADOPTED, 8, 9]);
    expect([...s.keys()].sort()).toEqual(keysOf([...HELD, ADOPTED, 9]).sort());
    expect(sessions.adopted).toEqual([keysOf([ADOPTED, 9]).map((key) => [key, { text: `row of ${key}` }])]);
    const items = KEYS.flatMap((key, i) => ([ADOPTED, 9].includes(of(key)) ? [`item-${i}`] : []));
    expect(outbox.adopted.map((rows) => rows.map(([key]) => key))).toEqual([items]);
    expect([...o.keys()]).toEqual(expect.arrayContaining(items));
    expect([...c.keys()]).toEqual(["nightly"]);
    // A row whose check fails has no part to read here: it loads with every set and stays.
    expect(s.isInvalid(BAD)).toBe(true);
  });

  it("takes a write of an adopted partition from the adopt's call on; an evict refuses them at once, naming the row and the set, and hands the rows to onEvict", async () => {
    const data = await dataWithRows();
    const { parted, s, sessions } = await heldPort(data);
    const [first, second] = keysOf([ADOPTED]);
    const adopted = parted.adopt([ADOPTED]);
    await s.set(first!, { text: "written as it adopts" });
    await adopted;
    expect(s.get(first!)).toEqual({ text: "written as it adopts" });
    expect(data.get(sessionsTable.path)!.get(first!)).toEqual({ text: "written as it adopts" });
    const evicted = parted.evict([ADOPTED]);
    expect(() => s.set(second!, { text: "after the evict" })).toThrow(
      new RegExp(
        `row "${second}" belongs to partition ${ADOPTED}, not one of the partitions this port holds \\(1-3, 5, 8\\)`,
      ),
    );
    await evicted;
    expect(new Map(sessions.evicted.flat())).toEqual(
      new Map(
        keysOf([ADOPTED]).map((key) => [key, { text: key === first ? "written as it adopts" : `row of ${key}` }]),
      ),
    );
    expect([...s.keys()].sort()).toEqual(keysOf(HELD).sort());
    expect(s.isInvalid(BAD)).toBe(true);
  });

  it("sees at adopt the rows another port wrote and removed while it did not hold their partition", async () => {
    const data = await dataWithRows();
    const { parted, s } = await heldPort(data);
    const other = await heldPort(data, [ADOPTED]);
    const [changed, removed] = keysOf([ADOPTED]);
    const added = Array.from({ length: 60 }, (_, i) => `agent:main:telegram:dm:new-${i}`).find(
      (key) => of(key) === ADOPTED,
    )!;
    await other.s.set(changed!, { text: "changed by the other" });
    await other.s.delete(removed!);
    await other.s.set(added, { text: "added by the other" });
    await other.parted.evict([ADOPTED]);
    await parted.adopt([ADOPTED]);
    expect(s.get(changed!)).toEqual({ text: "changed by the other" });
    expect(s.has(removed!)).toBe(false);
    expect(s.get(added)).toEqual({ text: "added by the other" });
  });

  it("loads the adopted partitions' rows into a table opened after the adopt, and not the evicted ones", async () => {
    const state = openMemoryState({ data: await dataWithRows(), parts: { of, held: HELD } });
    await state.parted!.adopt([ADOPTED]);
    await state.parted!.evict([1]);
    const outbox = await state.table<Row>(outboxTable);
    const items = KEYS.flatMap((key, i) => ([2, 3, 5, ADOPTED, 8].includes(of(key)) ? [`item-${i}`] : []));
    expect([...outbox.keys()].sort()).toEqual(items.sort());
  });

  it("does nothing on an adopt of partitions it holds, and has no parted without parts", async () => {
    const data = await dataWithRows();
    const { parted, s, sessions } = await heldPort(data);
    const [mine] = keysOf([1]);
    await s.set(mine!, { text: "written before" });
    await parted.adopt([1, 2]);
    expect(sessions.adopted).toEqual([]);
    expect(s.get(mine!)).toEqual({ text: "written before" });
    expect([...parted.held()].sort((a, b) => a - b)).toEqual(HELD);
    expect(openMemoryState({ data }).parted).toBeUndefined();
  });
});
