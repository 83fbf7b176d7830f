// The scheduler with a run a stop left in progress (docs/automation.md "Failures and restarts"): the
// inbox replays its stored turn, so the next start waits for that run's outcome and records it once,
// instead of a failure; only a run nothing holds counts as failed. A manual clock drives the timers.
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { CronJob } from "../../src/cron/cron-job.js";
import type { CronRunOutcome } from "../../src/cron/cron-run-log.js";
import { createCronScheduler } from "../../src/cron/cron-scheduler.js";
import type { CronRunStart } from "../../src/cron/run-cron-job.js";
import { createManualClock } from "../fakes/manual-clock.js";
import { openCronTables } from "../support/cron-tables.js";

const MIN = 60_000;
const HOUR = 60 * MIN;
const T0 = Date.parse("2026-03-28T12:00:00Z");
const OK: CronRunOutcome = { status: "ok", delivered: true, delivery: "delivered" };

/** A gateway's scheduler on `home`: `execute` and `resume` as the test scripts them; `close` stops it and its state. */
async function life(
  home: string,
  start: number,
  scripted: {
    execute?: (job: CronJob, run: CronRunStart) => Promise<CronRunOutcome>;
    resume?: (job: CronJob, runId: string) => Promise<CronRunOutcome | undefined>;
  },
) {
  const clock = createManualClock(start);
  const { state, store, runLog, logger } = await openCronTables(home, clock.now);
  const starts: CronRunStart[] = [];
  const scheduler = createCronScheduler({
    store,
    runLog,
    logger,
    now: clock.now,
    timers: clock.timers,
    newJobId: (name) => name,
    newRunId: (job, dueAt, trigger) => `${job.id}@${dueAt}:${trigger}`,
    execute: (job, run) => {
      starts.push(run);
      run.stored();
      return scripted.execute?.(job, run) ?? Promise.resolve(OK);
    },
    ...(scripted.resume && { resume: scripted.resume }),
  });
  return { clock, scheduler, starts, close: () => scheduler.stop(0).then(() => state.close()) };
}

/** A deferred outcome: the run a test holds open until it says how it ended. */
function held() {
  let end: (outcome: CronRunOutcome | undefined) => void = () => undefined;
  const outcome = new Promise<CronRunOutcome | undefined>((resolve) => (end = resolve));
  return { outcome, end };
}

const hourly = {
  name: "brief",
  schedule: { kind: "every" as const, everyMs: HOUR, anchorMs: T0 + 5 * MIN },
  message: "go",
  agentId: "main",
  session: "isolated",
  delivery: { mode: "none" as const },
  enabled: true,
  keepAfterRun: false,
};

/** A first life whose 12:05 run never ends, stopped with no drain: the run stays in progress on disk. */
async function cutFirstRun(home: string) {
  const first = await life(home, T0, { execute: () => new Promise<CronRunOutcome>(() => undefined) });
  await first.scheduler.start();
  const job = await first.scheduler.add(hourly);
  first.clock.advance(5 * MIN);
  await expect.poll(() => first.scheduler.get(job.id)?.state.runningSince).toBe(T0 + 5 * MIN);
  await first.close();
  return { job, runId: first.starts[0]!.runId };
}

describe("createCronScheduler with a run a stop left in progress", () => {
  it("names a run by its job and due time, and records nothing once stopped: the next start waits for the replay and records its outcome once", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "sb-cron-resume-"));
    const { job, runId } = await cutFirstRun(home);
    expect(runId).toBe(`${job.id}@${T0 + 5 * MIN}:schedule`);

    const replay = held();
    const asked: string[] = [];
    const second = await life(home, T0 + 10 * MIN, {
      resume: (_job, id) => {
        asked.push(id);
        return replay.outcome;
      },
    });
    await second.scheduler.start();
    expect(asked).toEqual([runId]);
    // Still in progress: not recorded as failed, not fired again, and busy for a manual run.
    expect(await second.scheduler.runs(job.id)).toEqual([]);
    expect(second.scheduler.runningRun(job.id)).toBe(runId);
    await expect(second.scheduler.runNow(job.id)).rejects.toThrow(/is running/);
    replay.end(OK);
    await second.scheduler.idle();
    const runs = await second.scheduler.runs(job.id);
    expect(runs).toEqual([
      expect.objectContaining({ runId, status: "ok", trigger: "schedule", startedAt: T0 + 5 * MIN }),
    ]);
    expect(second.scheduler.get(job.id)!.state).toMatchObject({ nextRunAt: T0 + HOUR + 5 * MIN, lastStatus: "ok" });
    expect(second.scheduler.get(job.id)!.state.runningSince).toBeUndefined();
    // Its next due time fires as scheduled, once.
    second.clock.advance(HOUR);
    await second.scheduler.idle();
    expect(second.starts.map((s) => s.runId)).toEqual([`${job.id}@${T0 + HOUR + 5 * MIN}:schedule`]);
    await second.close();
  });

  it("records a replayed run that failed as failed, with its error, once, and backs the job off", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "sb-cron-resume-"));
    const { job, runId } = await cutFirstRun(home);
    const failed: CronRunOutcome = { status: "error", error: "model down", delivered: false, delivery: "none" };
    const second = await life(home, T0 + 10 * MIN, { resume: async () => failed });
    await second.scheduler.start();
    await second.scheduler.idle();
    expect(await second.scheduler.runs(job.id)).toEqual([
      expect.objectContaining({ runId, status: "error", error: "model down" }),
    ]);
    expect(second.scheduler.get(job.id)!.state).toMatchObject({ consecutiveFailures: 1, lastError: "model down" });
    await second.close();
  });

  it("records a run nothing holds (never stored, or its end unknown) as interrupted, and runs a due time missed meanwhile once", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "sb-cron-resume-"));
    const { job, runId } = await cutFirstRun(home);
    // Down past the 13:05 due time as well.
    const second = await life(home, T0 + 2 * HOUR, { resume: async () => undefined });
    await second.scheduler.start();
    await second.scheduler.idle();
    const runs = await second.scheduler.runs(job.id);
    expect(runs.find((r) => r.runId === runId)).toMatchObject({
      status: "error",
      error: "the gateway stopped while this run was in progress",
    });
    // The missed 13:05 collapses into the retry after the backoff (30 s), once, as before.
    second.clock.advance(MIN);
    await second.scheduler.idle();
    expect(second.starts.map((s) => [s.trigger, s.dueAt])).toEqual([["schedule", T0 + 2 * HOUR + 30_000]]);
    await second.close();
  });

  it("runs a due time missed while the replayed run went on once, as a catch-up, after recording the run", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "sb-cron-resume-"));
    const { job, runId } = await cutFirstRun(home);
    const second = await life(home, T0 + 2 * HOUR, { resume: async () => OK });
    await second.scheduler.start();
    await second.scheduler.idle();
    second.clock.advance(0);
    await second.scheduler.idle();
    expect((await second.scheduler.runs(job.id)).map((r) => [r.runId, r.trigger])).toEqual([
      [`${job.id}@${T0 + HOUR + 5 * MIN}:catch-up`, "catch-up"],
      [runId, "schedule"],
    ]);
    expect(second.scheduler.get(job.id)!.state.nextRunAt).toBe(T0 + 2 * HOUR + 5 * MIN);
    await second.close();
  });
});
