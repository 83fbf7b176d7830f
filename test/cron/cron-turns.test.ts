// A cron run's id and outcome (src/cron/cron-turns.ts): the id derives from the job and due time,
// and the outcome comes from the turn run here, else from the run's end (`runs.find`/`runs.waitFor`).
import { storedRunId } from "../../src/agents/uuid-v5.js";
import { describe, expect, it } from "vitest";
import { createRunRegistry } from "../../src/agents/run-registry.js";
import type { StoredTurn } from "../../src/agents/stored-turn.js";
import { createCronOutcomes, cronDedupeKey, cronOutcomeOf, cronTurnRunner } from "../../src/cron/cron-turns.js";
import type { CronRunOutcome } from "../../src/cron/cron-run-log.js";
import type { AutomationDeps } from "../../src/cron/run-announced-turn.js";
import { createMemoryLogger } from "../../src/logger.js";

const never = () => false;

function setup(announced: string[] = []) {
  const runs = createRunRegistry();
  const outcomes = createCronOutcomes();
  return { runs, outcomes, deps: { runs, outcomes, handedOver: (id: string) => announced.includes(id) } };
}

describe("cron run ids", () => {
  it("names one due time of a job alike on every gateway of a schema, and nothing else alike", () => {
    const key = cronDedupeKey("brief-3fa9c2", 1_795_000_000_000, "schedule");
    expect(key).toBe("cron:brief-3fa9c2:1795000000000");
    expect(cronDedupeKey("brief-3fa9c2", 1_795_000_000_000, "catch-up")).toBe(key);
    expect(cronDedupeKey("brief-3fa9c2", 1_795_000_000_000, "manual")).toBe("cron:brief-3fa9c2:manual-1795000000000");
    expect(storedRunId("cron", "switchboard", key)).toBe(storedRunId("cron", "switchboard", key));
    expect(storedRunId("cron", "switchboard", key)).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(storedRunId("cron", "other", key)).not.toBe(storedRunId("cron", "switchboard", key));
    expect(storedRunId("cron", "switchboard", `${key}1`)).not.toBe(storedRunId("cron", "switchboard", key));
  });
});

describe("cronOutcomeOf", () => {
  it("answers the announce's verdict of a turn run here", async () => {
    const { outcomes, deps } = setup();
    const denied: CronRunOutcome = { status: "ok", delivered: false, delivery: "denied" };
    outcomes.begin("r1", Promise.resolve(denied));
    expect(await cronOutcomeOf(deps, "r1", never)).toEqual(denied);
  });

  it("reads a run's end when the turn did not run here: its status and error, delivered when its announce is in the outbox", async () => {
    const { runs, deps } = setup(["r1:announce"]);
    runs.create("r1", "agent:main:cron:brief");
    runs.finish("r1", { status: "ok", text: "hi" });
    runs.create("r2", "agent:main:cron:brief");
    runs.finish("r2", { status: "timeout", error: "took too long" });
    expect(await cronOutcomeOf(deps, "r1", never)).toEqual({
      sessionKey: "agent:main:cron:brief",
      status: "ok",
      delivered: true,
      delivery: "queued",
    });
    expect(await cronOutcomeOf(deps, "r2", never)).toMatchObject({
      status: "timeout",
      error: "took too long",
      delivered: false,
    });
  });

  it("reads the announce of a run another gateway ran from the schema, once that gateway is done with the run", async () => {
    const { runs, deps } = setup();
    runs.create("away", "agent:main:cron:brief");
    runs.finish("away", { status: "ok", text: "hi" });
    // Its inbox entry still pending there at the first look (the announce comes after the run's end), then done.
    const looks = [
      { pending: true, announced: false },
      { pending: false, announced: true },
    ];
    const announceOf = async () => looks.shift() ?? { pending: false, announced: true };
    expect(await cronOutcomeOf({ ...deps, announceOf }, "away", never)).toEqual({
      sessionKey: "agent:main:cron:brief",
      status: "ok",
      delivered: true,
      delivery: "queued",
    });
    expect(looks).toEqual([]);
    // Pending in this gateway's own inbox: a replay started here while it looked answers with its verdict.
    const { outcomes } = deps;
    runs.create("again", "agent:main:cron:brief");
    runs.finish("again", { status: "ok", text: "hi" });
    const replaying = async () => {
      outcomes.begin("again", Promise.resolve({ status: "ok", delivered: true, delivery: "delivered" }));
      return { pending: true, announced: false };
    };
    expect(await cronOutcomeOf({ ...deps, announceOf: replaying }, "again", never)).toMatchObject({
      delivery: "delivered",
    });
    const none = async () => ({ pending: false, announced: false });
    expect(await cronOutcomeOf({ ...deps, announceOf: none }, "away", never)).toMatchObject({ delivered: false });
  });

  it("waits for a run still going to end, and answers undefined for a run nothing holds or once closed", async () => {
    const { runs, deps } = setup();
    runs.create("r1", "agent:main:cron:brief");
    const outcome = cronOutcomeOf(deps, "r1", never);
    // Its lookup found it queued and now waits for its end.
    await new Promise((resolve) => setImmediate(resolve));
    runs.start("r1");
    runs.finish("r1", { status: "error", error: "model down" });
    expect(await outcome).toMatchObject({ status: "error", error: "model down" });
    expect(await cronOutcomeOf(deps, "unknown", never)).toBeUndefined();
    // A run whose end was forgotten (a restart on local files) whose announce is in the outbox ended well.
    const announced = setup(["gone:announce"]);
    expect(await cronOutcomeOf(announced.deps, "gone", never)).toEqual({
      status: "ok",
      delivered: true,
      delivery: "queued",
    });
    runs.create("r3", "agent:main:cron:brief");
    expect(await cronOutcomeOf(deps, "r3", () => true)).toBeUndefined();
  });

  it("answers ok for a run the inbox marked done whose end and announce nobody knows (local files after a restart), so it is not run again", async () => {
    const { runs, outcomes } = setup();
    const deps = { runs, outcomes, handedOver: () => false, handledRun: (id: string) => id === "done-run" };
    expect(await cronOutcomeOf(deps, "done-run", never)).toEqual({ status: "ok", delivered: false, delivery: "none" });
    expect(await cronOutcomeOf(deps, "never-stored", never)).toBeUndefined();
  });

  it("reads the stored end (PostgreSQL's run_results) of a run this process never ran, and waits for one stored as pending", async () => {
    type Row = { runId: string; sessionKey: string; status: string; queuedAt: number; error?: string };
    const rows = new Map<string, Row>([
      ["r1", { runId: "r1", sessionKey: "agent:main:cron:brief", status: "ok", queuedAt: 1 }],
    ]);
    let notify: (() => void) | undefined;
    const runs = createRunRegistry({
      durable: {
        record: async () => undefined,
        get: async (runId) => rows.get(runId),
        pending: async (runId) => (rows.has(runId) ? undefined : { sessionKey: "agent:main:cron:brief", queuedAt: 1 }),
        wait: (runId) => new Promise((resolve) => (notify = () => resolve(rows.get(runId)))),
      },
    });
    const deps = { runs, outcomes: createCronOutcomes(), handedOver: (id: string) => id === "r1:announce" };
    expect(await cronOutcomeOf(deps, "r1", never)).toEqual({
      sessionKey: "agent:main:cron:brief",
      status: "ok",
      delivered: true,
      delivery: "queued",
    });
    const waited = cronOutcomeOf(deps, "r2", never);
    await expect.poll(() => notify).toBeDefined();
    // The end is stored (by whichever gateway ran it) and its NOTIFY wakes the wait.
    rows.set("r2", {
      runId: "r2",
      sessionKey: "agent:main:cron:brief",
      status: "error",
      queuedAt: 1,
      error: "model down",
    });
    notify!();
    expect(await waited).toMatchObject({ status: "error", error: "model down", delivered: false });
  });

  it("ends a replayed run of a removed job without running it: aborted, its durable end and the entry's done queued in one step", async () => {
    const steps: string[] = [];
    const runs = createRunRegistry({
      durable: {
        record: async (run) => {
          steps.push(`record ${run.status}`);
          queueMicrotask(() => steps.push("next step"));
        },
        get: async () => undefined,
        pending: async () => undefined,
        wait: async () => undefined,
      },
    });
    const logger = createMemoryLogger();
    const enqueue = () => {
      throw new Error("a removed job's run must not run");
    };
    const deps = { logger, runtime: { enqueue } } as Partial<AutomationDeps> as AutomationDeps;
    const runner = cronTurnRunner(deps, createCronOutcomes(), { jobExists: never, runs });
    const turn: StoredTurn = {
      source: "cron",
      sessionKey: "agent:main:cron:brief",
      text: "summarise",
      owner: true,
      provenance: { kind: "system", channel: "cron" },
      input: { jobId: "brief", isolated: true },
    };
    const markDone = async () => void steps.push("done");
    await runner.run(turn, { runId: "r9", resumed: true, markDone });
    // The same synchronous step: on PostgreSQL one batch, one commit (run_results and the inbox row).
    expect(steps).toEqual(["record aborted", "done", "next step"]);
    const ended = { status: "aborted", error: "cron job brief was removed; this run was not replayed" };
    expect(await runs.waitFor("r9", 1_000)).toMatchObject({ runId: "r9", ...ended });
    expect(logger.records.map((r) => [r.level, r.fields])).toEqual([
      ["warn", { jobId: "brief", runId: "r9", sessionKey: "agent:main:cron:brief" }],
    ]);
  });
});
