// What the PostgreSQL port adds to the contract: group commit (many writes, few transactions), the
// insertion order kept as a Map keeps it, a NUL character stored, and a reader that cannot write.
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../../src/logger.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../../src/state/postgres/database.js";
import { openPostgresState } from "../../../src/state/postgres/postgres-state.js";
import type { TableSpec } from "../../../src/state/state-port.js";
import { freshSchema, usePostgres } from "../../support/postgres.js";

const db = usePostgres();
const opened: PostgresDatabase[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((database) => database.close()));
});

const spec: TableSpec<{ text: string }> = {
  name: "notes",
  path: "notes.json",
  what: "note",
  check: (_key, row) => ({ value: row as { text: string } }),
  invalidRows: "keep",
};

/** A port on `schema`, counting the transactions its writes take. */
async function openCounted(schema: string, readOnly = false) {
  const logger = createMemoryLogger();
  const database = await openPostgresDatabase({ url: db.url, schema, logger, probeEveryMs: 0, readOnly });
  opened.push(database);
  let transactions = 0;
  const counted: PostgresDatabase = {
    ...database,
    transaction: (fn, options) => {
      transactions++;
      return database.transaction(fn, options);
    },
  };
  return { state: openPostgresState(counted, { logger, readOnly }), transactions: () => transactions };
}

describe("the PostgreSQL state port", () => {
  it("commits 1,000 concurrent writes in a few transactions, not one per row", async () => {
    const { state, transactions } = await openCounted(freshSchema());
    const table = await state.table(spec);
    const before = transactions();
    await Promise.all(Array.from({ length: 1_000 }, (_, i) => table.set(`k${i}`, { text: `note ${i}` })));
    expect(transactions() - before).toBeLessThanOrEqual(2);
    await state.close();
  });

  it("keeps insertion order: a replaced row keeps its place, a row deleted and written again goes last", async () => {
    const schema = freshSchema();
    const first = await openCounted(schema);
    const table = await first.state.table(spec);
    await Promise.all(["a", "b", "c"].map((key) => table.set(key, { text: key })));
    // In one batch: replace a, delete and rewrite b, add d.
    const writes = [
      table.set("a", { text: "a2" }),
      table.delete("b"),
      table.set("b", { text: "b2" }),
      table.set("d", { text: "d" }),
    ];
    await Promise.all(writes);
    expect([...table.keys()]).toEqual(["a", "c", "b", "d"]);
    await first.state.close();

    const again = await (await openCounted(schema)).state.table(spec);
    expect([...again.entries()]).toEqual([
      ["a", { text: "a2" }],
      ["c", { text: "c" }],
      ["b", { text: "b2" }],
      ["d", { text: "d" }],
    ]);
  });

  it("stores a string with a NUL character (jsonb cannot hold it) with U+FFFD in its place, instead of failing the write", async () => {
    const schema = freshSchema();
    const { state } = await openCounted(schema);
    const table = await state.table(spec);
    await table.set("nul", { text: "before\u0000after" });
    await state.close();
    const again = await (await openCounted(schema)).state.table(spec);
    expect(again.get("nul")).toEqual({ text: "before\ufffdafter" });
  });

  it("refuses writes on a read-only port, which reads what the writer stored", async () => {
    const schema = freshSchema();
    const writer = await openCounted(schema);
    await (await writer.state.table(spec)).set("x", { text: "kept" });
    const reader = await openCounted(schema, true);
    const table = await reader.state.table(spec);
    expect(table.get("x")).toEqual({ text: "kept" });
    expect(() => table.set("y", { text: "no" })).toThrow('state table "notes" was opened read-only');
  });
});
