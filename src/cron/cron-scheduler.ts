import { randomBytes, randomUUID } from "node:crypto";
import { SwitchboardError, chatErrorText } from "../errors.js";
import type { Logger } from "../logger.js";
import { cronBackoffMs } from "./cron-backoff.js";
import type { CronJob, CronJobPatch, CronJobSpec } from "./cron-job.js";
import type { CronJobStore } from "./cron-job-store.js";
import type { CronRunLog, CronRunRecord } from "./cron-run-log.js";
import { nextRunAt } from "./next-run-at.js";

/** The timer functions the scheduler uses (a manual clock in tests). */
export interface CronTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Why a run started. */
export type CronTrigger = NonNullable<CronRunRecord["trigger"]>;

/** What a run the gateway's end interrupted is recorded with. */
const INTERRUPTED = "the gateway stopped while this run was in progress";

/** What running a job produced (the executor's answer). */
export type CronRunOutcome = Pick<
  CronRunRecord,
  "status" | "error" | "sessionKey" | "sessionId" | "delivered" | "delivery"
>;

/** Dependencies of {@link createCronScheduler}. */
export interface CronSchedulerDeps {
  store: CronJobStore;
  runLog: CronRunLog;
  /** runs one job to its end (the agent turn and its announce); never rejects */
  execute: (job: CronJob, runId: string) => Promise<CronRunOutcome>;
  logger: Logger;
  now?: () => number;
  timers?: CronTimers;
  newRunId?: () => string;
  newJobId?: (name: string) => string;
}

/** A one-shot job that failed this many times in a row is disabled. */
const ONE_SHOT_MAX_ATTEMPTS = 5;
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

/** Thrown for requests the scheduler refuses (unknown job, a one-shot time in the past, a job already running). */
export class CronRequestError extends SwitchboardError {
  declare readonly code: "NOT_FOUND" | "INVALID_REQUEST" | "BUSY";

  constructor(code: "NOT_FOUND" | "INVALID_REQUEST" | "BUSY", message: string) {
    super(code, message);
    this.name = "CronRequestError";
  }
}

/**
 * The scheduler: one timer for the earliest due job. A due job's next run is computed from the
 * time it starts, so a job missed while the gateway was down runs once at start (catch-up),
 * never once per missed slot. Failures in a row push the next run back (30 s ... 60 min) until a
 * success; a one-shot job is removed after it succeeded unless `keepAfterRun`.
 */
export function createCronScheduler(deps: CronSchedulerDeps) {
  const { store, logger } = deps;
  const now = deps.now ?? Date.now;
  const timers = deps.timers ?? nodeTimers;
  const newRunId = deps.newRunId ?? randomUUID;
  const newJobId = deps.newJobId ?? defaultJobId;
  const running = new Map<string, { runId: string; done: Promise<void> }>();
  const catchUp = new Set<string>();
  let timer: unknown;
  let started = false;

  function arm(): void {
    if (timer !== undefined) timers.clearTimeout(timer);
    timer = undefined;
    if (!started) return;
    const due = store
      .list()
      .filter((j) => j.enabled && !running.has(j.id) && j.state.nextRunAt !== undefined)
      .map((j) => j.state.nextRunAt!);
    if (due.length === 0) return;
    timer = timers.setTimeout(tick, Math.min(MAX_TIMER_MS, Math.max(0, Math.min(...due) - now())));
  }

  function tick(): void {
    timer = undefined;
    const at = now();
    for (const job of store.list()) {
      if (job.enabled && !running.has(job.id) && job.state.nextRunAt !== undefined && job.state.nextRunAt <= at) {
        launch(job, catchUp.delete(job.id) ? "catch-up" : "schedule");
      }
    }
    arm();
  }

  /** The state after a run: failures counted, the next run pushed back by the backoff. */
  function afterRun(job: CronJob, outcome: CronRunOutcome, endedAt: number): CronJob | undefined {
    const ok = outcome.status === "ok";
    const failures = ok ? 0 : job.state.consecutiveFailures + 1;
    const natural = job.schedule.kind === "at" ? undefined : (job.state.nextRunAt ?? safeNext(job, endedAt));
    const oneShot = job.schedule.kind === "at";
    if (ok && oneShot && !job.keepAfterRun) return undefined;
    let next = natural;
    let enabled = job.enabled && !(ok && oneShot);
    if (!ok) {
      const retryAt = endedAt + cronBackoffMs(failures);
      next = natural === undefined ? retryAt : Math.max(natural, retryAt);
      if (oneShot && failures >= ONE_SHOT_MAX_ATTEMPTS) enabled = false;
    }
    const { nextRunAt: _old, lastError: _err, runningSince: _running, ...rest } = job.state;
    return {
      ...job,
      enabled,
      state: {
        ...rest,
        lastStatus: outcome.status,
        lastDelivered: outcome.delivered,
        consecutiveFailures: failures,
        ...(outcome.error !== undefined && { lastError: outcome.error }),
        ...(next !== undefined && enabled && { nextRunAt: next }),
      },
    };
  }

  function launch(job: CronJob, trigger: CronTrigger): string {
    const runId = newRunId();
    const startedAt = now();
    // Started before any await, so the runId handed out is already a known run.
    const execution = deps.execute(job, runId).catch(
      (err: unknown): CronRunOutcome => ({
        status: "error",
        // a known error keeps its message; a bug is logged whole here and recorded as an apology with its error id
        error: chatErrorText(err, logger, "cron job crashed", { jobId: job.id, runId }),
        delivered: false,
        delivery: "none",
      }),
    );
    const done = (async () => {
      // The next slot is taken from the start time, so missed slots collapse into this one run.
      const next =
        trigger === "manual" ? job.state.nextRunAt : job.schedule.kind === "at" ? undefined : safeNext(job, startedAt);
      const { nextRunAt: _old, ...state } = job.state;
      // `runningSince` on disk: a crash before the end is found at the next start and counted as a failed run.
      await store.put({
        ...job,
        state: {
          ...state,
          lastRunAt: startedAt,
          lastRunId: runId,
          runningSince: startedAt,
          ...(next !== undefined && { nextRunAt: next }),
        },
      });
      logger.info({ jobId: job.id, runId, trigger }, "cron job started");
      const outcome = await execution;
      const endedAt = now();
      const current = store.get(job.id);
      if (current) {
        const updated = afterRun(current, outcome, endedAt);
        if (updated) await store.put(updated);
        else await store.remove(job.id);
      }
      await deps.runLog.append({ jobId: job.id, runId, startedAt, endedAt, trigger, ...outcome });
      const log = {
        jobId: job.id,
        runId,
        status: outcome.status,
        delivered: outcome.delivered,
        // the text the run recorded; an exception behind it was logged with its stack where it was caught
        ...(outcome.error && { error: outcome.error }),
      };
      if (outcome.status === "ok") logger.info(log, "cron job finished");
      else logger.warn(log, "cron job failed");
    })()
      .catch((err: unknown) => logger.error({ jobId: job.id, runId, err }, "cron run bookkeeping failed"))
      .finally(() => {
        running.delete(job.id);
        arm();
      });
    running.set(job.id, { runId, done });
    return runId;
  }

  /** The next run, or undefined (logged) for a schedule croner cannot read, e.g. a hand-edited jobs file. */
  function safeNext(job: CronJob, after: number): number | undefined {
    try {
      return nextRunAt(job.schedule, after, job.createdAt);
    } catch (err) {
      logger.error({ jobId: job.id, err }, "cron job has an unreadable schedule; not scheduled");
      return undefined;
    }
  }

  function required(id: string): CronJob {
    const job = store.get(id);
    if (!job) throw new CronRequestError("NOT_FOUND", `unknown cron job "${id}"; cron.list shows the jobs`);
    return job;
  }

  function withNextRun(job: CronJob): CronJob {
    // An `at` job due this very millisecond still runs; recurring jobs start after now.
    const next = nextRunAt(job.schedule, job.schedule.kind === "at" ? now() - 1 : now(), job.createdAt);
    const { nextRunAt: _old, ...state } = job.state;
    if (next === undefined && job.enabled)
      throw new CronRequestError("INVALID_REQUEST", 'schedule never fires: the "at" time is in the past');
    return { ...job, state: { ...state, ...(next !== undefined && { nextRunAt: next }) } };
  }

  /** A run the gateway's end interrupted (crash, or a stop that outlasted its drain): a failed run, logged and backed off. */
  async function recordInterrupted(job: CronJob, at: number): Promise<CronJob | undefined> {
    const outcome: CronRunOutcome = { status: "error", error: INTERRUPTED, delivered: false, delivery: "none" };
    const updated = afterRun(job, outcome, at);
    if (updated) await store.put(updated);
    else await store.remove(job.id);
    await deps.runLog.append({
      jobId: job.id,
      runId: job.state.lastRunId ?? "unknown",
      startedAt: job.state.runningSince!,
      endedAt: at,
      ...outcome,
    });
    logger.warn({ jobId: job.id, runId: job.state.lastRunId, error: INTERRUPTED }, "cron job failed");
    return updated;
  }

  return {
    /**
     * Records runs a stop interrupted as failed (so they are retried on the backoff, a one-shot job
     * too), computes missing next runs, notes the jobs missed while down (they run once, now), arms the timer.
     */
    async start(): Promise<void> {
      const at = now();
      for (const stored of store.list()) {
        const job = stored.state.runningSince === undefined ? stored : await recordInterrupted(stored, at);
        if (!job?.enabled) continue;
        if (job.state.nextRunAt === undefined) {
          const next = safeNext(job, at);
          if (next !== undefined) await store.put({ ...job, state: { ...job.state, nextRunAt: next } });
        } else if (job.state.nextRunAt <= at) catchUp.add(job.id);
      }
      started = true;
      tick();
    },

    /** Clears the timer (no new runs) and waits up to `drainMs` for runs in progress to be recorded. */
    async stop(drainMs = 10_000): Promise<void> {
      started = false;
      arm();
      let handle: NodeJS.Timeout | undefined;
      await Promise.race([this.idle(), new Promise((resolve) => (handle = setTimeout(resolve, drainMs)))]);
      clearTimeout(handle);
    },

    /** Settles when no run is in progress. */
    async idle(): Promise<void> {
      while (running.size > 0) await Promise.all([...running.values()].map((r) => r.done));
    },

    list: (): CronJob[] => store.list(),
    get: (id: string): CronJob | undefined => store.get(id),
    /** The run in progress of a job, if any. */
    runningRun: (id: string): string | undefined => running.get(id)?.runId,

    /** Adds a job (its agent already resolved) and arms the timer. */
    async add(spec: CronJobSpec & { agentId: string }): Promise<CronJob> {
      const at = now();
      let id = newJobId(spec.name);
      while (store.get(id)) id = newJobId(spec.name);
      const job = withNextRun({ ...spec, id, createdAt: at, updatedAt: at, state: { consecutiveFailures: 0 } });
      await store.put(job);
      arm();
      return job;
    },

    /** Changes the named fields; a new schedule or re-enabling recomputes the next run. */
    async update(id: string, patch: CronJobPatch): Promise<CronJob> {
      const current = required(id);
      const changes = Object.fromEntries(
        Object.entries(patch).filter(([, value]) => value !== undefined),
      ) as CronJobPatch;
      let job: CronJob = { ...current, ...changes, updatedAt: now() };
      if (patch.schedule || (patch.enabled && !current.enabled))
        job = withNextRun({ ...job, state: { ...job.state, consecutiveFailures: 0 } });
      await store.put(job);
      arm();
      return job;
    },

    async remove(id: string): Promise<boolean> {
      const removed = await store.remove(id);
      arm();
      return removed;
    },

    /** Runs a job now (enabled or not); returns its runId at once. */
    runNow(id: string): { runId: string } {
      const job = required(id);
      const busy = running.get(id);
      if (busy)
        throw new CronRequestError("BUSY", `cron job "${id}" is running (run ${busy.runId}); try again when it ends`);
      return { runId: launch(job, "manual") };
    },

    /** The newest runs of a job, newest first. */
    runs(id: string, limit?: number): Promise<CronRunRecord[]> {
      return deps.runLog.read(id, limit);
    },
  };
}

/** The running scheduler. */
export type CronScheduler = ReturnType<typeof createCronScheduler>;
