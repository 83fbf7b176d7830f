import { describe, expect, it } from "vitest";
import { type DurableRuns, type RunRecord, createRunRegistry, isFinalStatus } from "../../src/agents/run-registry.js";
import { createManualClock } from "../fakes/manual-clock.js";

const KEY = "agent:main:telegram:dm:42";

describe("createRunRegistry", () => {
  it("moves a run from queued to running to its final status, stamping each step", () => {
    const clock = createManualClock(1_000);
    const runs = createRunRegistry({ now: clock.now });
    const { run } = runs.create("r1", KEY);
    expect(run).toEqual({ runId: "r1", sessionKey: KEY, status: "queued", queuedAt: 1_000 });
    clock.advance(10);
    runs.start("r1");
    expect(runs.get("r1")).toMatchObject({ status: "running", startedAt: 1_010 });
    clock.advance(10);
    runs.finish("r1", { status: "ok", text: "done" });
    expect(runs.get("r1")).toEqual({
      runId: "r1",
      sessionKey: KEY,
      status: "ok",
      queuedAt: 1_000,
      startedAt: 1_010,
      endedAt: 1_020,
      text: "done",
    });
  });

  it("hands out copies, so a caller cannot change a stored run", () => {
    const runs = createRunRegistry();
    runs.create("r1", KEY);
    runs.get("r1")!.status = "ok";
    expect(runs.get("r1")!.status).toBe("queued");
  });

  it("resolves wait with the final record when the run ends", async () => {
    const runs = createRunRegistry();
    runs.create("r1", KEY);
    runs.start("r1");
    const waiting = runs.wait("r1", 60_000);
    runs.finish("r1", { status: "error", error: "model down" });
    expect(await waiting).toMatchObject({ runId: "r1", status: "error", error: "model down" });
  });

  it("resolves wait with undefined on timeout while the run goes on", async () => {
    const runs = createRunRegistry();
    runs.create("r1", KEY);
    runs.start("r1");
    expect(await runs.wait("r1", 5)).toBeUndefined();
    expect(runs.get("r1")!.status).toBe("running");
    runs.finish("r1", { status: "ok" });
    expect(runs.get("r1")!.status).toBe("ok");
  });

  it("resolves wait at once for a finished run, and with undefined for an unknown one", async () => {
    const runs = createRunRegistry();
    runs.create("r1", KEY);
    runs.finish("r1", { status: "ok", text: "hi" });
    // A huge timeout: only an immediate answer lets this test finish.
    expect(await runs.wait("r1", 2 ** 31 - 1)).toMatchObject({ status: "ok", text: "hi" });
    expect(await runs.wait("missing", 2 ** 31 - 1)).toBeUndefined();
  });

  it("ignores every change to a run that has ended", () => {
    const runs = createRunRegistry();
    runs.create("r1", KEY);
    runs.finish("r1", { status: "aborted", error: "aborted" });
    runs.start("r1");
    runs.finish("r1", { status: "ok", text: "late" });
    expect(runs.get("r1")).toMatchObject({ status: "aborted", error: "aborted" });
    expect(runs.get("r1")!.text).toBeUndefined();
    expect(runs.abort("r1")).toBe(false);
  });

  it("aborts the run's signal with the given reason", () => {
    const runs = createRunRegistry();
    const { signal } = runs.create("r1", KEY);
    expect(runs.abort("r1", "stopped by /stop")).toBe(true);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe("stopped by /stop");
    expect(runs.abort("missing")).toBe(false);
  });

  it("lists queued and running runs as active, per session or all", () => {
    const runs = createRunRegistry();
    runs.create("r1", KEY);
    runs.create("r2", KEY);
    runs.create("r3", "agent:main:main");
    runs.create("r4", KEY);
    runs.start("r2");
    runs.finish("r4", { status: "ok" });
    expect(runs.active(KEY).map((r) => [r.runId, r.status])).toEqual([
      ["r1", "queued"],
      ["r2", "running"],
    ]);
    expect(runs.active().map((r) => r.runId)).toEqual(["r1", "r2", "r3"]);
  });

  it("forgets runs that ended longer ago than retentionMs, and keeps runs still going", () => {
    const clock = createManualClock();
    const runs = createRunRegistry({ now: clock.now, retentionMs: 1_000 });
    runs.create("old", KEY);
    runs.finish("old", { status: "ok" });
    runs.create("recent", KEY);
    runs.create("going", KEY);
    runs.start("going");
    clock.advance(600);
    runs.finish("recent", { status: "ok" });
    clock.advance(600);
    runs.create("new", KEY);
    expect(runs.get("old")).toBeUndefined();
    expect(runs.get("recent")?.status).toBe("ok");
    expect(runs.get("going")?.status).toBe("running");
    expect(
      runs
        .recent()
        .map((r) => r.runId)
        .sort(),
    ).toEqual(["going", "new", "recent"]);
  });

  it("forgets thousands of ended runs oldest first, and never a run created again under a pruned id", () => {
    const clock = createManualClock();
    const runs = createRunRegistry({ now: clock.now, retentionMs: 1_000 });
    for (let i = 0; i < 5_000; i++) {
      runs.create(`r${i}`, KEY);
      runs.finish(`r${i}`, { status: "ok" });
      if (i % 1_000 === 999) clock.advance(400);
    }
    runs.create("r4999", KEY); // an id still kept, created again: queued now
    clock.advance(1);
    runs.create("late", KEY);
    // Ended at 0, 400 and 800 ms, more than 1,000 ms before now (2,001 ms): gone. Ended at 1,200 ms and later: kept.
    expect(runs.get("r2999")).toBeUndefined();
    expect(runs.get("r3000")?.status).toBe("ok");
    expect(runs.get("r4998")?.status).toBe("ok");
    clock.advance(5_000);
    runs.create("later", KEY);
    expect(runs.get("r4998")).toBeUndefined();
    expect(runs.get("r4999")?.status).toBe("queued");
    runs.finish("r4999", { status: "ok" });
    clock.advance(1_001);
    runs.create("last", KEY);
    expect(runs.get("r4999")).toBeUndefined();
    expect(runs.active().map((r) => r.runId)).toEqual(["late", "later", "last"]);
  });

  it("reports every transition to onChange, as snapshots", () => {
    const seen: RunRecord[] = [];
    const runs = createRunRegistry({ onChange: (run) => seen.push(run) });
    runs.create("r1", KEY);
    runs.start("r1");
    runs.finish("r1", { status: "timeout", error: "timeout" });
    runs.finish("r1", { status: "ok" });
    expect(seen.map((r) => r.status)).toEqual(["queued", "running", "timeout"]);
    expect(seen.every((r) => r.runId === "r1" && r.sessionKey === KEY)).toBe(true);
  });
});

describe("isFinalStatus", () => {
  it.each([
    ["queued", false],
    ["running", false],
    ["ok", true],
    ["error", true],
    ["timeout", true],
    ["aborted", true],
  ] as const)("says %s is final: %s", (status, final) => {
    expect(isFinalStatus(status)).toBe(final);
  });
});

/** A durable record in memory (the PostgreSQL one: test/cluster/run-results.test.ts), counting its writes. */
function memoryDurable(pending: Record<string, { sessionKey: string; queuedAt: number }> = {}) {
  const rows = new Map<string, RunRecord>();
  const written: RunRecord[] = [];
  const waiting = new Map<string, (run: RunRecord) => void>();
  const durable: DurableRuns = {
    async record(run) {
      written.push(run);
      rows.set(run.runId, run);
      waiting.get(run.runId)?.(run);
    },
    get: async (runId) => rows.get(runId),
    pending: async (runId) => pending[runId],
    wait: (runId, timeoutMs) =>
      rows.has(runId)
        ? Promise.resolve(rows.get(runId))
        : new Promise((resolve) => {
            waiting.set(runId, resolve);
            setTimeout(() => resolve(undefined), timeoutMs);
          }),
  };
  return { durable, rows, written };
}

describe("createRunRegistry with a durable record", () => {
  it("records a run's end once: early in the turn's step (recordEnd), not again at finish with the same status", () => {
    const clock = createManualClock(1_000);
    const { durable, written } = memoryDurable();
    const runs = createRunRegistry({ now: clock.now, durable });
    runs.create("r1", KEY);
    runs.start("r1");
    runs.recordEnd("r1", { status: "ok", text: "done" });
    expect(written).toEqual([expect.objectContaining({ runId: "r1", status: "ok", text: "done", endedAt: 1_000 })]);
    clock.advance(40); // the commit takes a while: memory keeps the time the record holds
    runs.finish("r1", { status: "ok", text: "done" });
    expect(written).toHaveLength(1);
    expect(runs.get("r1")?.endedAt).toBe(1_000);
  });

  it("records the end again when the run ended otherwise than recorded early (its commit failed), and every failure", () => {
    const { durable, written } = memoryDurable();
    const runs = createRunRegistry({ durable });
    runs.create("r1", KEY);
    runs.recordEnd("r1", { status: "ok", text: "done" });
    runs.finish("r1", { status: "error", error: "not stored" });
    runs.create("r2", KEY);
    runs.finish("r2", { status: "aborted", error: "aborted" });
    expect(written.map((run) => [run.runId, run.status])).toEqual([
      ["r1", "ok"],
      ["r1", "error"],
      ["r2", "aborted"],
    ]);
  });

  it("finds a run it does not know in the durable record, else as queued when an inbox holds it; waits for it there", async () => {
    const { durable, rows } = memoryDurable({ pending: { sessionKey: KEY, queuedAt: 7 } });
    rows.set("ended", { runId: "ended", sessionKey: KEY, status: "ok", text: "hi", queuedAt: 1, endedAt: 2 });
    const runs = createRunRegistry({ durable });
    expect(runs.get("ended")).toBeUndefined();
    expect(await runs.find("ended")).toMatchObject({ status: "ok", text: "hi" });
    expect(await runs.find("pending")).toEqual({ runId: "pending", sessionKey: KEY, status: "queued", queuedAt: 7 });
    expect(await runs.find("nobody")).toBeUndefined();
    const waiting = runs.waitFor("pending", 60_000);
    await durable.record({ runId: "pending", sessionKey: KEY, status: "ok", text: "late", queuedAt: 7, endedAt: 9 });
    expect(await waiting).toMatchObject({ status: "ok", text: "late" });
  });

  it("finds a run that ended elsewhere between its end's read and its pending read (not as unknown)", async () => {
    const { durable, rows } = memoryDurable();
    // The run is pending until this read, and ended just before it answers (its end written in its commit).
    durable.pending = async (runId) => {
      rows.set(runId, { runId, sessionKey: KEY, status: "ok", text: "done", queuedAt: 1, endedAt: 2 });
      return undefined;
    };
    expect(await createRunRegistry({ durable }).find("racing")).toMatchObject({ status: "ok", text: "done" });
  });

  it("reads a stored status it does not know as an error", async () => {
    const { durable, rows } = memoryDurable();
    rows.set("odd", { runId: "odd", sessionKey: KEY, status: "exploded" as "ok", queuedAt: 1, endedAt: 2 });
    expect(await createRunRegistry({ durable }).find("odd")).toMatchObject({ status: "error" });
  });

  it("without a durable record knows only its own runs (local files: one gateway)", async () => {
    const runs = createRunRegistry();
    expect(await runs.find("elsewhere")).toBeUndefined();
    expect(await runs.waitFor("elsewhere", 60_000)).toBeUndefined();
  });

  it("without a durable record finds a run its inbox holds pending before a replay registers it, and waits for its end", async () => {
    const pending = new Map([["replayed", { sessionKey: KEY, queuedAt: 500 }]]);
    const runs = createRunRegistry({ pendingHere: (runId) => pending.get(runId) });
    expect(await runs.find("replayed")).toEqual({
      runId: "replayed",
      sessionKey: KEY,
      status: "queued",
      queuedAt: 500,
    });
    expect(await runs.find("elsewhere")).toBeUndefined();
    const ended = runs.waitFor("replayed", 60_000);
    // The replay registers it a moment later, and it ends.
    runs.create("replayed", KEY);
    pending.delete("replayed");
    runs.finish("replayed", { status: "ok", text: "done" });
    expect(await ended).toMatchObject({ runId: "replayed", status: "ok", text: "done" });
    expect(await runs.waitFor("elsewhere", 60_000)).toBeUndefined();
  });
});
