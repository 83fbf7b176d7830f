import { appendFile, mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { createMemoryLogger } from "../../../src/logger.js";
import { segmentPath } from "../../../src/state/record-file/journal-segments.js";
import { type SnapshotStep, openRecordFile } from "../../../src/state/record-file/open-record-file.js";
import { type SharedJournal, openSharedJournal } from "../../../src/state/record-file/shared-journal.js";
import { runAndKill } from "../../support/run-and-kill.js";

interface Row {
  n: number;
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "sb-shared-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const logger = createMemoryLogger();

function openTable(dir: string, name: string, journal: SharedJournal | undefined, extra: { readOnly?: boolean } = {}) {
  return openRecordFile<Row>({
    path: path.join(dir, name),
    what: "test file",
    logger,
    invalidRows: "keep",
    check: (_key, row) =>
      typeof (row as Row)?.n === "number" ? { value: row as Row } : { error: "n must be a number" },
    ...(journal && { shared: { journal, table: name } }),
    ...extra,
  });
}

/** Opens the journal and tables a.json and b.json in `dir` (read-only: nothing is written). */
async function openState(dir: string, readOnly = false) {
  const journal = await openSharedJournal({ dir, logger, readOnly });
  const a = await openTable(dir, "a.json", journal, { readOnly });
  const b = await openTable(dir, "b.json", journal, { readOnly });
  return { journal, a, b };
}

const rowsOf = (table: { entries(): IterableIterator<[string, Row]> }) => Object.fromEntries(table.entries());

describe("the shared journal", () => {
  it("keeps the changes of several files in one journal; a reader in another process sees them before any snapshot", async () => {
    const dir = await tempDir();
    const { a, b } = await openState(dir);
    await Promise.all([a.set("x", { n: 1 }), b.set("y", { n: 2 }), a.set("z", { n: 3 })]);
    await b.delete("y");
    await b.set("w", { n: 4 });
    expect(await readdir(dir)).toEqual(["state.journal.00000001"]);
    const reader = await openState(dir, true);
    expect(rowsOf(reader.a)).toEqual({ x: { n: 1 }, z: { n: 3 } });
    expect(rowsOf(reader.b)).toEqual({ w: { n: 4 } });
    expect(await readdir(dir)).toEqual(["state.journal.00000001"]); // the reader wrote nothing
  });

  it("leaves exact snapshots and no journal after every file and the journal are closed", async () => {
    const dir = await tempDir();
    const { journal, a, b } = await openState(dir);
    await Promise.all([a.set("x", { n: 1 }), b.set("y", { n: 2 })]);
    await a.close();
    await b.close();
    await journal.close();
    expect((await readdir(dir)).sort()).toEqual(["a.json", "a.json.meta", "b.json", "b.json.meta"]);
    expect(JSON.parse(await readFile(path.join(dir, "a.json"), "utf8"))).toEqual({ x: { n: 1 } });
    expect(JSON.parse(await readFile(path.join(dir, "b.json"), "utf8"))).toEqual({ y: { n: 2 } });
  });

  it("keeps a segment until every file with changes in it has a snapshot past them", async () => {
    const dir = await tempDir();
    const { a, b } = await openState(dir);
    await Promise.all([a.set("x", { n: 1 }), b.set("y", { n: 2 })]);
    await a.snapshot();
    await a.set("x", { n: 5 }); // segment 1 is finished now; it holds b's change, which no snapshot of b has
    await a.snapshot();
    expect(await readdir(dir)).toContain("state.journal.00000001");
    // A crash now (no close): b's change comes back from the journal.
    const crashed = await openState(dir, true);
    expect(rowsOf(crashed.b)).toEqual({ y: { n: 2 } });
    await b.snapshot();
    expect(await readdir(dir)).not.toContain("state.journal.00000001");
    const again = await openState(dir);
    expect(rowsOf(again.a)).toEqual({ x: { n: 5 } });
    expect(rowsOf(again.b)).toEqual({ y: { n: 2 } });
  });

  it("writes a commit as one line: after a crash that tore it, none of its changes are there", async () => {
    const dir = await tempDir();
    const { journal, a, b } = await openState(dir);
    await journal.commit(() => {
      void a.set("k", { n: 1 });
      void b.set("k", { n: 1 });
    });
    const segment = segmentPath(path.join(dir, "state"), 1);
    const lines = (await readFile(segment, "utf8")).trim().split("\n");
    expect(lines).toHaveLength(2); // the header and the commit
    expect(JSON.parse(lines[1]!).c).toHaveLength(2);
    // A second commit torn by a crash half way through its line.
    const torn = '{"s":9,"c":[{"t":"a.json","k":"k","v":{"n":2}},{"t":"b.json","k":"k","v":{"n"';
    await appendFile(segment, torn);
    const again = await openState(dir);
    expect(again.a.get("k")).toEqual({ n: 1 });
    expect(again.b.get("k")).toEqual({ n: 1 });
    expect((await readFile(segment, "utf8")).endsWith(torn)).toBe(false); // cut off, never acknowledged
  });

  it("joins a commit inside a commit, and still writes a commit whose function throws after changing rows", async () => {
    const dir = await tempDir();
    const { journal, a, b } = await openState(dir);
    await journal.commit(() => {
      void a.set("outer", { n: 1 });
      void journal.commit(() => void b.set("inner", { n: 2 }));
    });
    expect(() =>
      journal.commit(() => {
        void a.set("before-throw", { n: 3 });
        throw new Error("boom");
      }),
    ).toThrow("boom");
    await journal.idle();
    const again = await openState(dir);
    expect(rowsOf(again.a)).toEqual({ outer: { n: 1 }, "before-throw": { n: 3 } });
    expect(rowsOf(again.b)).toEqual({ inner: { n: 2 } });
  });

  it("folds a file's own journal from an earlier version into a snapshot once, then uses the shared one", async () => {
    const dir = await tempDir();
    const own = await openTable(dir, "a.json", undefined);
    await own.set("old", { n: 1 });
    await own.snapshot();
    await own.set("newer", { n: 2 }); // only in a.json.journal.<n>: the earlier version stopped by a crash
    expect((await readdir(dir)).some((name) => name.startsWith("a.json.journal."))).toBe(true);
    const { a } = await openState(dir);
    expect(rowsOf(a)).toEqual({ old: { n: 1 }, newer: { n: 2 } });
    expect((await readdir(dir)).some((name) => name.startsWith("a.json.journal."))).toBe(false);
    await a.set("shared", { n: 3 });
    const again = await openState(dir);
    expect(rowsOf(again.a)).toEqual({ old: { n: 1 }, newer: { n: 2 }, shared: { n: 3 } });
  });

  it("replays changes of a new journal whose numbers restart below an older snapshot's", async () => {
    const dir = await tempDir();
    const first = await openState(dir);
    for (let i = 0; i < 30; i++) await first.a.set(`k${i}`, { n: i });
    await first.a.close();
    await first.b.close();
    await first.journal.close(); // no segment left: the next journal gets a new id and counts from 0
    expect((await readdir(dir)).some((name) => name.startsWith("state.journal."))).toBe(false);
    const second = await openState(dir);
    await second.a.set("k0", { n: 100 });
    // crash: a.json's sidecar names the old journal with seq 29; the new change has seq 0
    const third = await openState(dir);
    expect(third.a.get("k0")).toEqual({ n: 100 });
    expect(third.a.get("k29")).toEqual({ n: 29 });
  });

  it("numbers a file's new changes past its snapshot when the lines before it are gone", async () => {
    const dir = await tempDir();
    // Run 1 writes both files and crashes: b's line stays in the journal until b is opened again.
    const first = await openState(dir);
    await first.a.set("k", { n: 1 });
    await first.b.set("k", { n: 1 });
    // Run 2 opens only a (an agent's store opens when first used), writes, and stops cleanly:
    // a's snapshot holds numbers that no line on disk has any more.
    const journal2 = await openSharedJournal({ dir, logger });
    const a2 = await openTable(dir, "a.json", journal2);
    for (let n = 2; n <= 6; n++) await a2.set("k", { n });
    await a2.close();
    await journal2.close();
    // Run 3: an acknowledged change, then a clean stop.
    const journal3 = await openSharedJournal({ dir, logger });
    const a3 = await openTable(dir, "a.json", journal3);
    await a3.set("k", { n: 99 });
    await a3.close();
    await journal3.close();
    const reader = await openState(dir, true);
    expect(reader.a.get("k")).toEqual({ n: 99 });
    expect(reader.b.get("k")).toEqual({ n: 1 });
  });

  it("sets a segment with an unreadable line aside and writes clean snapshots", async () => {
    const dir = await tempDir();
    const { a } = await openState(dir);
    await a.set("x", { n: 1 });
    const segment = segmentPath(path.join(dir, "state"), 1);
    await appendFile(segment, "not json\n");
    const journal = await openSharedJournal({ dir, logger });
    expect(journal.report.corruptSegments).toHaveLength(1);
    const again = await openTable(dir, "a.json", journal);
    expect(again.get("x")).toEqual({ n: 1 });
    expect(JSON.parse(await readFile(path.join(dir, "a.json"), "utf8"))).toEqual({ x: { n: 1 } });
  });
});

/**
 * Every acknowledged change is there after a crash, and a commit's two rows are equal (all or
 * nothing). With `recover` a writer also opens (recovering) and stops cleanly; without it the next
 * child starts from the crash as it was. `aOnlyRounds`: rounds 2, 6, 10, ... ran with only a open.
 */
async function expectAllAcked(
  dir: string,
  acked: number[],
  when: string,
  recover: boolean,
  aOnlyRounds = false,
): Promise<void> {
  const reader = await openState(dir, true);
  const writer = recover ? await openState(dir) : undefined;
  for (const { a, b } of writer ? [reader, writer] : [reader]) {
    const latest = new Map<string, number>();
    for (const i of acked) {
      // Rounds that opened only a wrote every change as a single row of a.
      const aOnlyRound = Math.floor(i / 1_000_000) % 4 === 2 && aOnlyRounds;
      const key = i % 10 !== 1 || aOnlyRound ? `s${i % 50}` : `c${i % 20}`;
      latest.set(key, Math.max(i, latest.get(key) ?? -1));
    }
    for (const [key, i] of latest) {
      expect(a.get(key)?.n, `${when}: a.${key}`).toBeGreaterThanOrEqual(i);
      if (key.startsWith("c")) expect(b.get(key)?.n, `${when}: b.${key} (same commit as a)`).toBe(a.get(key)?.n);
    }
    for (const [key, row] of b.entries()) expect(a.get(key)?.n, `${when}: a.${key}`).toBe(row.n);
  }
  if (!writer) return;
  await writer.a.close();
  await writer.b.close();
  await writer.journal.close();
}

describe("the shared journal under SIGKILL", () => {
  it("keeps every acknowledged change and every commit whole across 20 SIGKILLs at random times", async () => {
    const dir = await tempDir();
    const acked: number[] = [];
    for (let round = 0; round < 20; round++) {
      // Every fourth run opens only a (b's lines wait in the journal); every other run starts from the
      // previous crash without a clean stop in between.
      const args = [dir, String(round * 1_000_000), "-", ...(round % 4 === 2 ? ["a-only"] : [])];
      const got = await runAndKill("shared-journal-writer.ts", args, 5 + Math.random() * 80);
      acked.push(...got);
      await expectAllAcked(dir, acked, `round ${round}`, round % 2 === 1, true);
    }
    expect(acked.length).toBeGreaterThan(0);
  }, 300_000);

  it("keeps every acknowledged change when killed at each step of a snapshot (4 rounds per step)", async () => {
    const dir = await tempDir();
    const acked: number[] = [];
    const steps: SnapshotStep[] = ["captured", "temp-written", "renamed", "meta-written", "segments-deleted"];
    for (let round = 0; round < 20; round++) {
      const step = steps[round % steps.length]!;
      const got = await runAndKill(
        "shared-journal-writer.ts",
        [dir, String(round * 1_000_000), step],
        20_000,
        `at ${step}`,
      );
      acked.push(...got);
      await expectAllAcked(dir, acked, `round ${round} (killed at ${step})`, round % 2 === 1);
    }
    expect(acked.length).toBeGreaterThan(0);
  }, 300_000);
});
