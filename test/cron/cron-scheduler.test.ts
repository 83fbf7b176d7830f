import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { CronJob } from "../../src/cron/cron-job.js";
import type { CronRunOutcome } from "../../src/cron/cron-run-log.js";
import { createCronScheduler } from "../../src/cron/cron-scheduler.js";
import { createManualClock } from "../fakes/manual-clock.js";
import { readStateFile } from "../support/read-state-file.js";
import { storedCronJob, writeCronJobsFile } from "../support/cron-jobs-file.js";
import { openCronTables } from "../support/cron-tables.js";

/** The jobs stored now (the table's snapshot and journal), as another process reads them. */
async function storedJobs(home: string): Promise<CronJob[]> {
  return Object.values(await readStateFile(path.join(home, "cron", "jobs.json"), path.join(home, "state"))) as never;
}

const MIN = 60_000;
const HOUR = 60 * MIN;

/** A scheduler on a temp home and a manual clock; `outcomes` scripts what each run returns (default ok). */
async function setup(
  options: {
    start?: number;
    home?: string;
    outcomes?: Array<CronRunOutcome["status"]>;
    hang?: boolean;
    /** the run throws this instead of returning an outcome */
    crash?: Error;
  } = {},
) {
  const home = options.home ?? (await mkdtemp(path.join(os.tmpdir(), "sb-cron-")));
  const clock = createManualClock(options.start ?? Date.parse("2026-03-28T12:00:00Z"));
  const { store, runLog, logger } = await openCronTables(home, clock.now);
  const runs: Array<{ jobId: string; at: number }> = [];
  const outcomes = [...(options.outcomes ?? [])];
  let n = 0;
  const scheduler = createCronScheduler({
    store,
    runLog,
    logger,
    now: clock.now,
    timers: clock.timers,
    newRunId: () => `run-${++n}`,
    newJobId: (name) => name,
    execute: async (job) => {
      runs.push({ jobId: job.id, at: clock.now() });
      if (options.hang) return new Promise<CronRunOutcome>(() => undefined); // the process "dies" during the run
      if (options.crash) throw options.crash;
      const status = outcomes.shift() ?? "ok";
      return { status, delivered: false, ...(status !== "ok" && { error: "model down" }) };
    },
  });
  /** Moves the clock and lets the runs it started finish. */
  const advance = async (ms: number) => {
    const until = clock.now() + ms;
    // Timer by timer: a run re-arms the timer only after it ended, which takes a few awaits.
    for (let next = clock.nextTimerAt(); next !== undefined && next <= until; next = clock.nextTimerAt()) {
      clock.advance(next - clock.now());
      await scheduler.idle();
    }
    clock.advance(until - clock.now());
  };
  return { home, clock, scheduler, runs, advance, store, logger };
}

const spec = (name: string, schedule: CronJob["schedule"], extra: Partial<CronJob> = {}) => ({
  name,
  schedule,
  message: "go",
  agentId: "main",
  session: "isolated",
  delivery: { mode: "none" as const },
  enabled: true,
  keepAfterRun: false,
  ...extra,
});

describe("createCronScheduler", () => {
  it("records a run that throws as an apology with an error id and logs the whole error under that id", async () => {
    const { scheduler, advance, logger } = await setup({ crash: new TypeError("cannot read 'text' of undefined") });
    await scheduler.start();
    const job = await scheduler.add(spec("tick", { kind: "every", everyMs: 10 * MIN }));
    await advance(10 * MIN);
    const [run] = await scheduler.runs(job.id);
    expect(run).toMatchObject({ status: "error", error: expect.stringMatching(/error id [0-9a-f]{8}/) });
    expect(run!.error).not.toContain("undefined");
    const errorId = /error id ([0-9a-f]{8})/.exec(run!.error!)![1];
    expect(logger.records).toContainEqual(
      expect.objectContaining({
        level: "error",
        fields: expect.objectContaining({
          jobId: job.id,
          errorId,
          err: expect.objectContaining({ message: "cannot read 'text' of undefined", stack: expect.any(String) }),
        }),
      }),
    );
  });

  it("runs a cron expression at 08:30 Berlin time on both sides of the spring DST change", async () => {
    const { scheduler, runs, advance } = await setup();
    await scheduler.start();
    await scheduler.add(spec("brief", { kind: "cron", expr: "30 8 * * *", tz: "Europe/Berlin" }));
    await advance(3 * 24 * HOUR);
    expect(runs.map((r) => new Date(r.at).toISOString())).toEqual([
      "2026-03-29T06:30:00.000Z", // CEST (UTC+2), DST began that night
      "2026-03-30T06:30:00.000Z",
      "2026-03-31T06:30:00.000Z",
    ]);
  });

  it("runs once at 02:30 Berlin on the night the hour repeats, and the skipped 02:30 runs once at 03:30", async () => {
    const autumn = await setup({ start: Date.parse("2026-10-24T12:00:00Z") });
    await autumn.scheduler.start();
    await autumn.scheduler.add(spec("night", { kind: "cron", expr: "30 2 * * *", tz: "Europe/Berlin" }));
    await autumn.advance(24 * HOUR);
    expect(autumn.runs.map((r) => new Date(r.at).toISOString())).toEqual(["2026-10-25T00:30:00.000Z"]);
    const spring = await setup();
    await spring.scheduler.start();
    await spring.scheduler.add(spec("night", { kind: "cron", expr: "30 2 * * *", tz: "Europe/Berlin" }));
    await spring.advance(24 * HOUR);
    expect(spring.runs.map((r) => new Date(r.at).toISOString())).toEqual(["2026-03-29T01:30:00.000Z"]);
  });

  it("runs an `every` job on its interval from when it was added", async () => {
    const { scheduler, runs, advance, clock } = await setup();
    const t0 = clock.now();
    await scheduler.start();
    await scheduler.add(spec("tick", { kind: "every", everyMs: 10 * MIN }));
    await advance(35 * MIN);
    expect(runs.map((r) => r.at - t0)).toEqual([10 * MIN, 20 * MIN, 30 * MIN]);
  });

  it("runs an `at` job once and removes it after success", async () => {
    const { scheduler, runs, advance, clock, home } = await setup();
    await scheduler.start();
    const job = await scheduler.add(spec("once", { kind: "at", atMs: clock.now() + 5 * MIN }));
    await advance(HOUR);
    expect(runs).toEqual([{ jobId: job.id, at: clock.now() - 55 * MIN }]);
    expect(scheduler.list()).toEqual([]);
    expect(await storedJobs(home)).toEqual([]);
    expect((await scheduler.runs(job.id)).map((r) => r.status)).toEqual(["ok"]);
  });

  it("counts a one-shot run a crash interrupted as failed, logs it, and retries it on the backoff", async () => {
    const first = await setup({ hang: true });
    await first.scheduler.start();
    const job = await first.scheduler.add(spec("once", { kind: "at", atMs: first.clock.now() + 5 * MIN }));
    first.clock.advance(5 * MIN);
    await expect.poll(async () => (await storedJobs(first.home))[0]?.state.runningSince).toBeDefined();
    // Killed mid-run; the next gateway starts an hour later.
    const second = await setup({ home: first.home, start: first.clock.now() + HOUR });
    await second.scheduler.start();
    // Nothing holds the run (no stored turn replays it): recorded as failed once the start looked.
    await second.scheduler.idle();
    expect(await second.scheduler.runs(job.id)).toEqual([
      expect.objectContaining({ status: "error", error: "the gateway stopped while this run was in progress" }),
    ]);
    expect(second.scheduler.get(job.id)).toMatchObject({
      enabled: true,
      state: { consecutiveFailures: 1, nextRunAt: second.clock.now() + 30_000 },
    });
    await second.advance(MIN);
    expect(second.runs).toHaveLength(1);
    expect(second.scheduler.list()).toEqual([]);
    expect((await second.scheduler.runs(job.id)).map((r) => r.status)).toEqual(["ok", "error"]);
  });

  it("keeps a one-shot job with keepAfterRun, disabled", async () => {
    const { scheduler, advance, clock } = await setup();
    await scheduler.start();
    await scheduler.add(spec("keep", { kind: "at", atMs: clock.now() + MIN }, { keepAfterRun: true }));
    await advance(HOUR);
    expect(scheduler.list()).toMatchObject([{ id: "keep", enabled: false, state: { lastStatus: "ok" } }]);
  });

  it("refuses an `at` time in the past", async () => {
    const { scheduler, clock } = await setup();
    await expect(scheduler.add(spec("late", { kind: "at", atMs: clock.now() - MIN }))).rejects.toThrow(/in the past/);
  });

  it("runs a job missed while the gateway was down once at start, then on its schedule", async () => {
    const first = await setup();
    await first.scheduler.start();
    await first.scheduler.add(spec("tick", { kind: "every", everyMs: 10 * MIN }));
    await first.advance(10 * MIN);
    expect(first.runs).toHaveLength(1);
    await first.scheduler.stop();
    // Down for 5 hours: 30 slots missed.
    const later = first.clock.now() + 5 * HOUR + 3 * MIN;
    const second = await setup({ home: first.home, start: later });
    await second.scheduler.start();
    await second.scheduler.idle();
    expect(second.runs.map((r) => r.at)).toEqual([later]);
    await second.advance(10 * MIN);
    expect(second.runs).toHaveLength(2);
    const log = await second.scheduler.runs("tick");
    expect(log.map((r) => r.trigger)).toEqual(["schedule", "catch-up", "schedule"]);
  });

  it("backs off 30 s, 1 min, 5 min, 15 min, 60 min after failures in a row and recovers after a success", async () => {
    const { scheduler, runs, advance, clock } = await setup({
      outcomes: ["error", "error", "error", "error", "error", "error", "ok", "error"],
    });
    await scheduler.start();
    await scheduler.add(spec("flaky", { kind: "every", everyMs: 1000 }));
    await advance(8522_500);
    const gaps = runs.slice(1, 9).map((r, i) => r.at - runs[i]!.at);
    expect(runs).toHaveLength(9); // the 8 scripted outcomes and the first default success
    expect(gaps).toEqual([30_000, 60_000, 300_000, 900_000, 3_600_000, 3_600_000, 1000, 30_000]);
    expect(scheduler.get("flaky")!.state).toMatchObject({
      consecutiveFailures: 0,
      lastStatus: "ok",
      nextRunAt: runs[8]!.at + 1000,
    });
    expect(clock.now()).toBeGreaterThan(runs[8]!.at);
  });

  it("retries a failed one-shot job with backoff and disables it after 5 attempts", async () => {
    const { scheduler, runs, advance, clock } = await setup({
      outcomes: ["error", "error", "error", "error", "error"],
    });
    await scheduler.start();
    await scheduler.add(spec("once", { kind: "at", atMs: clock.now() + MIN }));
    await advance(5 * HOUR);
    expect(runs).toHaveLength(5);
    expect(scheduler.get("once")).toMatchObject({
      enabled: false,
      state: { lastStatus: "error", lastError: "model down", consecutiveFailures: 5 },
    });
  });

  it("runs a job now on request, without moving its schedule", async () => {
    const { scheduler, runs, clock } = await setup();
    await scheduler.start();
    const job = await scheduler.add(spec("brief", { kind: "cron", expr: "0 8 * * *", tz: "UTC" }));
    const { runId } = await scheduler.runNow(job.id);
    await scheduler.idle();
    expect(runId).toBe("run-1");
    expect(runs).toEqual([{ jobId: "brief", at: clock.now() }]);
    expect(scheduler.get("brief")!.state.nextRunAt).toBe(Date.parse("2026-03-29T08:00:00Z"));
    await expect(scheduler.runNow("nope")).rejects.toThrow(/unknown cron job "nope"/);
  });

  it("leaves no timer behind when stopped", async () => {
    const { scheduler, clock } = await setup();
    await scheduler.start();
    await scheduler.add(spec("tick", { kind: "every", everyMs: MIN }));
    expect(clock.nextTimerAt()).toBeDefined();
    await scheduler.stop();
    expect(clock.nextTimerAt()).toBeUndefined();
  });

  it("moves a corrupt jobs file aside and starts empty", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "sb-cron-"));
    await mkdir(path.join(home, "cron"), { recursive: true });
    await writeFile(path.join(home, "cron", "jobs.json"), "{ not json");
    const { scheduler, logger } = await setup({ home });
    expect(scheduler.list()).toEqual([]);
    expect(logger.records.some((e) => e.level === "error" && /corrupt/.test(e.message))).toBe(true);
  });
});

describe("createCronScheduler with a hand-edited jobs file", () => {
  it("starts, logs and skips a job whose cron expression croner cannot read", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "sb-cron-"));
    await writeCronJobsFile(home, [
      storedCronJob({ id: "bad", schedule: { kind: "cron", expr: "99 * * * *", tz: "UTC" } }),
    ]);
    const { scheduler, logger, runs, advance } = await setup({ home });
    await scheduler.start();
    await advance(2 * HOUR);
    expect(runs).toEqual([]);
    expect(scheduler.list().map((j) => j.id)).toEqual(["bad"]);
    expect(logger.records.some((r) => r.level === "error" && r.fields.jobId === "bad")).toBe(true);
  });
});

describe("the cron jobs table on the state port", () => {
  it("reads an earlier version's jobs file, keeps an invalid job untouched, and schedules the valid one", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "sb-cron-"));
    await mkdir(path.join(home, "cron"), { recursive: true });
    const first = await setup({ home });
    const job = await first.scheduler.add(spec("kept", { kind: "every", everyMs: HOUR }));
    const broken = { id: "broken", name: "no schedule" };
    await writeFile(path.join(home, "cron", "jobs.json"), JSON.stringify({ version: 1, jobs: [job, broken] }));
    await rm(path.join(home, "state"), { recursive: true, force: true });
    const { scheduler, runs, advance } = await setup({ home });
    expect(scheduler.list().map((j) => j.id)).toEqual([job.id]);
    await scheduler.start();
    await advance(HOUR);
    expect(runs.map((r) => r.jobId)).toEqual([job.id]);
    // The snapshot is now rows by id; the invalid job is kept in it untouched.
    const snapshot = JSON.parse(await readFile(path.join(home, "cron", "jobs.json"), "utf8"));
    expect(snapshot.broken).toEqual(broken);
    expect(snapshot[job.id].state.lastRunId).toBe("run-1");
  });
});
