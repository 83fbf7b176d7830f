import { randomBytes, randomUUID } from "node:crypto";
import type { Logger } from "../logger.js";
import type { CronJob } from "./cron-job.js";
import type { CronJobStore } from "./cron-job-store.js";
import { cronRequests } from "./cron-requests.js";
import type { CronRunLog, CronRunOutcome, CronTrigger } from "./cron-run-log.js";
import { safeNextRun } from "./cron-run-state.js";
import { type CronRunContext, type CronRunStart, resumeCronRun, startCronRun } from "./run-cron-job.js";

/** The timer functions the scheduler uses (a manual clock in tests). */
export interface CronTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Dependencies of {@link createCronScheduler}. */
export interface CronSchedulerDeps {
  store: CronJobStore;
  runLog: CronRunLog;
  /** runs one job to its end (the agent turn and its announce) */
  execute: (job: CronJob, run: CronRunStart) => Promise<CronRunOutcome>;
  /** the outcome of a run a restart found in progress (see `CronRunContext.resume`) */
  resume?: CronRunContext["resume"];
  logger: Logger;
  now?: () => number;
  timers?: CronTimers;
  /** the id of a job's run for a due time (default a random UUID) */
  newRunId?: (job: CronJob, dueAt: number, trigger: CronTrigger) => string;
  newJobId?: (name: string) => string;
}

const MAX_TIMER_MS = 2_147_483_647;
const nodeTimers: CronTimers = {
  // unref: the gateway's server keeps the process alive; a pending job alone must not.
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** `brief-3fa9c2`: a slug of the name and 6 random hex digits. */
function defaultJobId(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40);
  return `${slug || "job"}-${randomBytes(3).toString("hex")}`;
}

/** Whether a job is waiting for its next run (enabled, not running, with a next run). */
function waiting(
  job: CronJob,
  running: ReadonlyMap<string, unknown>,
): job is CronJob & { state: { nextRunAt: number } } {
  return job.enabled && !running.has(job.id) && job.state.nextRunAt !== undefined;
}

/** The scheduler's moving parts: the runs in progress, the one timer (armed for the earliest due job), and the jobs missed while down. */
function createCronCore(deps: CronSchedulerDeps) {
  let closed = false;
  const ctx: CronRunContext = {
    ...deps,
    now: deps.now ?? Date.now,
    nextOf: safeNextRun(deps.logger),
    closed: () => closed,
  };
  const { timers = nodeTimers, newRunId = () => randomUUID() } = deps;
  const running = new Map<string, { runId: string; done: Promise<void> }>();
  const catchUp = new Set<string>();
  let timer: unknown;
  const track = (job: CronJob, runId: string, run: Promise<void>) => {
    const done = run.finally(() => {
      running.delete(job.id);
      core.arm();
    });
    running.set(job.id, { runId, done });
  };
  const core = {
    ...ctx,
    running,
    catchUp,
    started: false,
    /** the tables close: runs ending from now on are recorded by the next start */
    close(): void {
      closed = true;
    },
    newJobId: deps.newJobId ?? defaultJobId,
    arm(): void {
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
      const due = core.started ? ctx.store.list().filter((j) => waiting(j, running)) : [];
      if (due.length === 0) return;
      const first = Math.min(...due.map((j) => j.state.nextRunAt));
      timer = timers.setTimeout(core.tick, Math.min(MAX_TIMER_MS, Math.max(0, first - ctx.now())));
    },
    tick(): void {
      timer = undefined;
      const at = ctx.now();
      for (const job of ctx.store.list())
        if (waiting(job, running) && job.state.nextRunAt <= at)
          core.launch(job, catchUp.delete(job.id) ? "catch-up" : "schedule");
      core.arm();
    },
    launch(job: CronJob, trigger: CronTrigger): { runId: string; stored: Promise<void> } {
      const { runId, stored, done } = startCronRun(ctx, job, trigger, newRunId);
      track(job, runId, done);
      return { runId, stored };
    },
    /** Waits for the outcome of the run a restart found in progress; a due time passed meanwhile then runs as a catch-up. */
    resume(job: CronJob): void {
      const recorded = resumeCronRun(ctx, job).then((due) => void (due && catchUp.add(job.id)));
      track(job, job.state.lastRunId ?? "unknown", recorded);
    },
  };
  return core;
}

/**
 * Waits for the outcome of each run a stop left in progress (recorded once it ended), notes each
 * job missed while down, and gives each job without one its next run.
 */
async function prepareJobs(core: ReturnType<typeof createCronCore>, at: number): Promise<void> {
  for (const job of core.store.list()) {
    // Its outcome settles the job (next run, backoff) before anything else is decided for it.
    if (job.state.runningSince !== undefined) {
      core.resume(job);
      continue;
    }
    if (!job.enabled) continue;
    if (job.state.nextRunAt !== undefined) {
      if (job.state.nextRunAt <= at) core.catchUp.add(job.id);
      continue;
    }
    const next = core.nextOf(job, at);
    if (next !== undefined) await core.store.put({ ...job, state: { ...job.state, nextRunAt: next } });
  }
}

/**
 * The scheduler: one timer for the earliest due job. A due job's next run is computed from the
 * time it starts, so a job missed while the gateway was down runs once at start (catch-up),
 * never once per missed slot. Failures in a row push the next run back (30 s ... 60 min) until a
 * success; a one-shot job is removed after it succeeded unless `keepAfterRun`.
 */
export function createCronScheduler(deps: CronSchedulerDeps) {
  const core = createCronCore(deps);
  return {
    /**
     * Waits for the outcomes of the runs a stop left in progress (their stored turns are replayed;
     * a run nothing holds is recorded as failed and retried on the backoff, a one-shot job too),
     * computes missing next runs, notes the jobs missed while down (they run once, now), arms the timer.
     */
    async start(): Promise<void> {
      await prepareJobs(core, core.now());
      core.started = true;
      core.tick();
    },
    /**
     * Clears the timer (no new runs), waits up to `drainMs` for runs in progress to be recorded, and
     * closes the jobs and runs tables (a run still going then is recorded by the next start, once its replay ended).
     */
    async stop(drainMs = 10_000): Promise<void> {
      core.started = false;
      core.arm();
      let handle: NodeJS.Timeout | undefined;
      await Promise.race([this.idle(), new Promise((resolve) => (handle = setTimeout(resolve, drainMs)))]);
      clearTimeout(handle);
      core.close();
      await core.store.close();
      await core.runLog.close();
    },
    /** Settles when no run is in progress. */
    async idle(): Promise<void> {
      while (core.running.size > 0) await Promise.all([...core.running.values()].map((r) => r.done));
    },
    ...cronRequests(core),
  };
}

/** The running scheduler. */
export type CronScheduler = ReturnType<typeof createCronScheduler>;
