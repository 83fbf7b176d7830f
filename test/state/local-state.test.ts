import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { createMemoryLogger } from "../../src/logger.js";
import { openLocalState } from "../../src/state/local-state.js";
import type { TableSpec } from "../../src/state/state-port.js";

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "sb-local-state-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const spec = (dir: string, name = "rows"): TableSpec<{ n: number }> => ({
  name,
  path: path.join(dir, `${name}.json`),
  what: "test table",
  invalidRows: "keep",
  check: (_key, row) =>
    typeof (row as { n?: unknown }).n === "number" ? { value: row as { n: number } } : { error: "n is not a number" },
});

describe("openLocalState", () => {
  it("refuses to open a table name that is already open, and opens it again once it is closed", async () => {
    const dir = await tempDir();
    const state = openLocalState({ dir, logger: createMemoryLogger() });
    const table = await state.table(spec(dir));
    await expect(state.table(spec(dir))).rejects.toThrow('state table "rows" is already open');
    await table.set("a", { n: 1 });
    await table.close();
    const again = await state.table(spec(dir));
    expect(again.get("a")).toEqual({ n: 1 });
    await state.close();
  });

  it("closes every table still open, leaving each JSON file exact on its own", async () => {
    const dir = await tempDir();
    const state = openLocalState({ dir, logger: createMemoryLogger() });
    const one = await state.table(spec(dir, "one"));
    const two = await state.table(spec(dir, "two"));
    await state.commit(() => {
      void one.set("a", { n: 1 });
      void two.set("b", { n: 2 });
      void one.delete("missing");
    });
    await state.close();
    expect(JSON.parse(await readFile(path.join(dir, "one.json"), "utf8"))).toEqual({ a: { n: 1 } });
    expect(JSON.parse(await readFile(path.join(dir, "two.json"), "utf8"))).toEqual({ b: { n: 2 } });
    expect((await readdir(dir)).filter((name) => name.includes(".journal."))).toEqual([]);
  });

  it("gives a read-only port the rows another port acknowledged, and refuses its writes", async () => {
    const dir = await tempDir();
    const writer = openLocalState({ dir, logger: createMemoryLogger() });
    const table = await writer.table(spec(dir));
    await table.set("a", { n: 1 });
    const reader = openLocalState({ dir, logger: createMemoryLogger(), readOnly: true });
    expect(reader.readOnly).toBe(true);
    const view = await reader.table(spec(dir));
    expect(view.get("a")).toEqual({ n: 1 });
    expect(() => view.set("b", { n: 2 })).toThrow("read-only");
    await reader.close();
    await writer.close();
  });

  it("writes a commit across tables as one journal line, so a crash keeps all of it or none", async () => {
    const dir = await tempDir();
    const state = openLocalState({ dir, logger: createMemoryLogger() });
    const one = await state.table(spec(dir, "one"));
    const two = await state.table(spec(dir, "two"));
    await one.set("before", { n: 0 });
    await state.commit(() => {
      void one.set("a", { n: 1 });
      void two.set("b", { n: 2 });
      void one.delete("before");
    });
    const segment = (await readdir(dir)).find((name) => name.startsWith("state.journal."))!;
    const lines = (await readFile(path.join(dir, segment), "utf8")).trim().split("\n");
    expect(lines).toHaveLength(3); // the journal's id, the lone set, the commit
    expect(JSON.parse(lines[2]!).c).toEqual([
      { t: "one.json", k: "a", v: { n: 1 } },
      { t: "two.json", k: "b", v: { n: 2 } },
      { t: "one.json", k: "before", d: 1 },
    ]);
    await state.close();
  });
});
