import { appendFile, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { createMemoryLogger } from "../../../src/logger.js";
import { segmentPath } from "../../../src/state/record-file/journal-segments.js";
import {
  type RecordFileOptions,
  type SnapshotStep,
  openRecordFile,
} from "../../../src/state/record-file/open-record-file.js";
import { createSessionStore } from "../../../src/sessions/session-store.js";
import { runAndKill } from "../../support/run-and-kill.js";
import { onLocalState } from "../../support/local-state.js";

interface Row {
  n: number;
}

async function tempFile(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "sb-record-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return path.join(dir, "rows.json");
}

/** Opens `file`; rows must be `{ n: number }`, and every check is counted. */
async function open(file: string, extra: Partial<RecordFileOptions<Row>> = {}) {
  const logger = createMemoryLogger();
  const checked: string[] = [];
  const table = await openRecordFile<Row>({
    path: file,
    what: "test file",
    logger,
    invalidRows: "keep",
    check(key, row) {
      checked.push(key);
      return typeof (row as Row)?.n === "number" ? { value: row as Row } : { error: "n must be a number" };
    },
    ...extra,
  });
  return { table, logger, checked };
}

describe("openRecordFile", () => {
  it("acknowledges a change once it is in the journal, and a new process sees it before any snapshot", async () => {
    const file = await tempFile();
    const { table } = await open(file);
    await Promise.all([table.set("a", { n: 1 }), table.set("b", { n: 2 }), table.delete("nothing")]);
    await table.set("a", { n: 3 });
    await table.delete("b");
    // No snapshot yet: only the journal holds the changes.
    expect(await readdir(path.dirname(file))).toEqual(["rows.json.journal.00000001"]);
    const reader = await open(file, { readOnly: true });
    expect(Object.fromEntries(reader.table.entries())).toEqual({ a: { n: 3 } });
  });

  it("writes the snapshot in today's format at close, with a sidecar, and removes the journal it covers", async () => {
    const file = await tempFile();
    const { table } = await open(file);
    for (let i = 0; i < 5; i++) await table.set(`k${i}`, { n: i });
    await table.close();
    expect((await readdir(path.dirname(file))).sort()).toEqual(["rows.json", "rows.json.meta"]);
    const text = await readFile(file, "utf8");
    expect(text.split("\n")[1]).toBe('  "k0": {"n":0},');
    expect(JSON.parse(text)).toEqual({ k0: { n: 0 }, k1: { n: 1 }, k2: { n: 2 }, k3: { n: 3 }, k4: { n: 4 } });
  });

  it("trusts a snapshot it wrote itself (no row checked again) but checks a hand-edited one in full", async () => {
    const file = await tempFile();
    const first = await open(file);
    await first.table.set("a", { n: 1 });
    await first.table.close();
    const trusted = await open(file);
    expect(trusted.table.report.trusted).toBe(true);
    expect(trusted.checked).toEqual([]);
    expect(trusted.table.get("a")).toEqual({ n: 1 });

    await writeFile(file, JSON.stringify({ a: { n: 1 }, b: { n: "two" } }));
    const edited = await open(file);
    expect(edited.table.report.trusted).toBe(false);
    expect(edited.checked.sort()).toEqual(["a", "b"]);
    expect(edited.table.get("b")).toBeUndefined();
    expect(edited.table.isInvalid("b")).toBe(true);
    expect(edited.logger.records).toContainEqual(
      expect.objectContaining({ level: "warn", fields: expect.objectContaining({ key: "b" }) }),
    );
  });

  it("rewrites a hand-written file at close even without changes, so the next open trusts it", async () => {
    const file = await tempFile();
    await writeFile(file, '{ "a": { "n": 1 }, // a comment\n}');
    const first = await open(file);
    expect(first.table.report.trusted).toBe(false);
    await first.table.close();
    const second = await open(file);
    expect(second.table.report.trusted).toBe(true);
    expect(second.checked).toEqual([]);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ a: { n: 1 } });
  });

  it("keeps an invalid row through its own snapshots without checking or exposing it", async () => {
    const file = await tempFile();
    await writeFile(file, JSON.stringify({ bad: { n: "x" } }));
    const first = await open(file);
    await first.table.set("good", { n: 1 });
    await first.table.close();
    const again = await open(file);
    expect(again.checked).toEqual([]);
    expect(again.table.isInvalid("bad")).toBe(true);
    expect([...again.table.keys()]).toEqual(["good"]);
    expect(JSON.parse(await readFile(file, "utf8")).bad).toEqual({ n: "x" });
  });

  it("cuts off a torn last journal line (never acknowledged) and logs it", async () => {
    const file = await tempFile();
    const { table } = await open(file);
    await table.set("a", { n: 1 });
    await table.flush();
    await appendFile(segmentPath(file, 1), '{"s":1,"k":"a","v":{"n"');
    const reopened = await open(file);
    expect(reopened.table.get("a")).toEqual({ n: 1 });
    expect(await readFile(segmentPath(file, 1), "utf8")).toBe('{"s":0,"k":"a","v":{"n":1}}\n');
    expect(reopened.logger.records).toContainEqual(
      expect.objectContaining({ level: "warn", message: expect.stringContaining("torn last journal line") }),
    );
  });

  it("sets a journal segment with an unreadable line aside, reports it, and keeps the readable changes", async () => {
    const file = await tempFile();
    await writeFile(segmentPath(file, 1), '{"s":0,"k":"a","v":{"n":1}}\nGARBAGE\n{"s":2,"k":"b","v":{"n":2}}\n');
    const { table, logger } = await open(file);
    expect(Object.fromEntries(table.entries())).toEqual({ a: { n: 1 }, b: { n: 2 } });
    expect(table.report.corruptSegments).toHaveLength(1);
    expect(await readFile(table.report.corruptSegments[0]!, "utf8")).toContain("GARBAGE");
    expect(logger.records).toContainEqual(
      expect.objectContaining({ level: "error", fields: expect.objectContaining({ lines: [2] }) }),
    );
    // The damage is rewritten into a clean snapshot at once, so the next open is quiet.
    const next = await open(file);
    expect(next.logger.records.filter((r) => r.level !== "info")).toEqual([]);
    expect(Object.fromEntries(next.table.entries())).toEqual({ a: { n: 1 }, b: { n: 2 } });
  });

  it("never writes when opened read-only, even with a torn journal", async () => {
    const file = await tempFile();
    await writeFile(segmentPath(file, 1), '{"s":0,"k":"a","v":{"n":1}}\n{"s":1,"k":"b"');
    const before = await readFile(segmentPath(file, 1), "utf8");
    const { table } = await open(file, { readOnly: true });
    expect(Object.fromEntries(table.entries())).toEqual({ a: { n: 1 } });
    expect(() => table.set("c", { n: 3 })).toThrow(/read-only/);
    await table.close();
    expect(await readdir(path.dirname(file))).toEqual(["rows.json.journal.00000001"]);
    expect(await readFile(segmentPath(file, 1), "utf8")).toBe(before);
  });

  it("snapshots in the background once the journal outgrows the threshold, and changes keep flowing", async () => {
    const file = await tempFile();
    const steps: SnapshotStep[] = [];
    const { table } = await open(file, { snapshotAfterBytes: 500, onSnapshotStep: (s) => void steps.push(s) });
    for (let i = 0; i < 100; i++) await table.set(`k${i % 7}`, { n: i });
    await table.flush();
    expect(steps).toContain("segments-deleted");
    const reader = await open(file, { readOnly: true });
    expect(reader.table.get("k1")).toEqual({ n: 99 });
    expect(reader.table.size).toBe(7);
  });
});

describe("the session store on the record file", () => {
  it("loses no update under 1,000 concurrent read-modify-writes of one entry", async () => {
    const file = await tempFile();
    const store = await createSessionStore(onLocalState({ path: file, keys: {}, logger: createMemoryLogger() }));
    await store.patch("agent:main:main", () => ({ sessionId: "s", updatedAt: 0, inputTokens: 0 }));
    await Promise.all(
      Array.from({ length: 1_000 }, () =>
        store.patch("agent:main:main", (current) => ({ inputTokens: (current?.inputTokens ?? 0) + 1 })),
      ),
    );
    const reader = await createSessionStore(
      onLocalState({ path: file, keys: {}, logger: createMemoryLogger(), readOnly: true }),
    );
    expect(reader.get("agent:main:main")?.inputTokens).toBe(1_000);
  });
});

describe("openRecordFile crash safety", () => {
  const steps: SnapshotStep[] = ["captured", "temp-written", "renamed", "meta-written", "segments-deleted"];

  /** Every acknowledged change is there (or superseded by a later one), and no key appears twice. */
  async function expectAllAcked(file: string, acked: number[], label: string): Promise<void> {
    for (const readOnly of [true, false]) {
      const { table } = await open(file, { readOnly });
      for (const i of acked) {
        const row = table.get(`k${i % 50}`);
        expect(row, `${label}: ack ${i} lost`).toBeDefined();
        expect(row!.n, `${label}: ack ${i} superseded by an older value`).toBeGreaterThanOrEqual(i);
      }
      expect(table.size).toBeLessThanOrEqual(50);
      if (!readOnly) await table.close();
    }
    const snapshot = await readFile(file, "utf8").catch(() => "{}");
    const keys = snapshot
      .split("\n")
      .map((line) => /^ {2}"([^"]+)":/.exec(line)?.[1])
      .filter((key) => key !== undefined);
    expect(new Set(keys).size, `${label}: a key written twice in the snapshot`).toBe(keys.length);
  }

  it("keeps every acknowledged change across 20 SIGKILLs, each at a step of a snapshot", async () => {
    const file = await tempFile();
    const acked: number[] = [];
    for (let round = 0; round < 20; round++) {
      const step = steps[round % steps.length]!;
      const got = await runAndKill(
        "record-file-writer.ts",
        [file, String(round * 1_000_000), step],
        20_000,
        `at ${step}`,
      );
      acked.push(...got);
      await expectAllAcked(file, acked, `round ${round} (killed at ${step})`);
    }
    expect(acked.length).toBeGreaterThan(0);
  }, 300_000);

  it("keeps every acknowledged change across 20 SIGKILLs at random times while snapshots run", async () => {
    const file = await tempFile();
    const acked: number[] = [];
    for (let round = 0; round < 20; round++) {
      const got = await runAndKill("record-file-writer.ts", [file, String(round * 1_000_000)], 5 + Math.random() * 80);
      acked.push(...got);
      await expectAllAcked(file, acked, `round ${round}`);
    }
    expect(acked.length).toBeGreaterThan(0);
  }, 300_000);
});
