import { chatErrorText } from "../errors.js";
import type { Logger } from "../logger.js";
import type { CronJob } from "./cron-job.js";
import type { CronJobStore } from "./cron-job-store.js";
import type { CronRunLog, CronRunOutcome, CronTrigger } from "./cron-run-log.js";
import { type NextRunOf, jobAfterRun, jobAtStart } from "./cron-run-state.js";

/** One run as it starts: its id (derived from the job and due time), the due time, and why it runs. */
export interface CronRunStart {
  runId: string;
  /** ms: the due time it runs for (a manual run: when it was asked for) */
  dueAt: number;
  trigger: CronTrigger;
  /** called once the run is stored (it is a known run from then on; `cron.run` answers then) */
  stored: () => void;
  /** true once the scheduler stopped: nothing more is recorded, the next start reads the outcome */
  closed: () => boolean;
}

/** What running and recording one job needs. */
export interface CronRunContext {
  store: CronJobStore;
  runLog: CronRunLog;
  logger: Logger;
  now: () => number;
  /** runs one job to its end (the agent turn and its announce) */
  execute: (job: CronJob, run: CronRunStart) => Promise<CronRunOutcome>;
  /**
   * The outcome of a run a restart found in progress, once it ended (the inbox replays it under its
   * id); undefined when nothing holds it. Absent: every such run counts as interrupted.
   */
  resume?: ((job: CronJob, runId: string, closed: () => boolean) => Promise<CronRunOutcome | undefined>) | undefined;
  nextOf: NextRunOf;
  /** true once the scheduler stopped (its tables are closing) */
  closed: () => boolean;
}

/** What a run is recorded with when nothing holds it after a restart (it was never stored, or its end is unknown). */
const INTERRUPTED = "the gateway stopped while this run was in progress";

/** One run's record besides its outcome. */
type RunFacts = { runId: string; startedAt: number; trigger?: CronTrigger | undefined };

/**
 * Runs one job and records it: its start on disk, the outcome on the job (backoff, removal of a
 * finished one-shot job), the run log and a log line. Never rejects. The job is executed before
 * the first await, so the runId handed out is already a known run once `run.stored` was called.
 */
async function runCronJob(ctx: CronRunContext, job: CronJob, run: CronRunStart) {
  const { runId, trigger } = run;
  const startedAt = ctx.now();
  const execution = ctx.execute(job, run).catch(
    (err: unknown): CronRunOutcome => ({
      status: "error",
      // a known error keeps its message; a bug is logged whole here and recorded as an apology with its error id
      error: chatErrorText(err, ctx.logger, "cron job crashed", { jobId: job.id, runId }),
      delivered: false,
      delivery: "none",
    }),
  );
  try {
    await ctx.store.put(jobAtStart(job, trigger, runId, startedAt, ctx.nextOf));
    ctx.logger.info({ jobId: job.id, runId, trigger }, "cron job started");
    await recordOutcome(ctx, job.id, { runId, startedAt, trigger }, await execution);
  } catch (err) {
    ctx.logger.error({ jobId: job.id, runId, err }, "cron run bookkeeping failed");
  }
}

/**
 * Starts a job's run for its due time (a manual run: now): its id, a promise settled once it is
 * stored (or ended), and its end, recorded.
 */
export function startCronRun(
  ctx: CronRunContext,
  job: CronJob,
  trigger: CronTrigger,
  newRunId: (job: CronJob, dueAt: number, trigger: CronTrigger) => string,
) {
  const dueAt = trigger === "manual" ? ctx.now() : (job.state.nextRunAt ?? ctx.now());
  const runId = newRunId(job, dueAt, trigger);
  let markStored: () => void = () => undefined;
  const stored = new Promise<void>((resolve) => (markStored = resolve));
  const run = runCronJob(ctx, job, { runId, dueAt, trigger, stored: markStored, closed: ctx.closed });
  return { runId, stored, done: run.finally(markStored) };
}

/** The outcome of a run nothing holds after a restart. */
const interrupted: CronRunOutcome = { status: "error", error: INTERRUPTED, delivered: false, delivery: "none" };

/**
 * A run a restart found in progress (a crash, or a stop that outlasted its drain): the inbox
 * replays its stored turn under the same run id, and its outcome is recorded once it ended; a run
 * nothing holds is recorded as failed and retried on the backoff. Never rejects; true when the
 * job's next run is due already (a due time passed meanwhile: it runs now, as a catch-up).
 */
export async function resumeCronRun(ctx: CronRunContext, job: CronJob): Promise<boolean> {
  const runId = job.state.lastRunId ?? "unknown";
  try {
    ctx.logger.info({ jobId: job.id, runId }, "cron job run in progress at the last stop: waiting for its outcome");
    const outcome = (await ctx.resume?.(job, runId, ctx.closed)) ?? interrupted;
    const facts = { runId, startedAt: job.state.runningSince ?? ctx.now(), trigger: job.state.runningTrigger };
    await recordOutcome(ctx, job.id, facts, outcome);
  } catch (err) {
    ctx.logger.error({ jobId: job.id, runId, err }, "cron run bookkeeping failed");
  }
  const after = ctx.store.get(job.id);
  return !!after?.enabled && after.state.nextRunAt !== undefined && after.state.nextRunAt <= ctx.now();
}

/** Records a run's outcome on its job and in the run log, unless the scheduler stopped (the next start records it). */
async function recordOutcome(ctx: CronRunContext, jobId: string, run: RunFacts, outcome: CronRunOutcome) {
  if (ctx.closed()) return;
  const endedAt = ctx.now();
  const current = ctx.store.get(jobId);
  if (current) await settleJob(ctx, current, outcome, endedAt);
  const trigger = run.trigger === undefined ? {} : { trigger: run.trigger };
  await ctx.runLog.append({ jobId, runId: run.runId, startedAt: run.startedAt, endedAt, ...trigger, ...outcome });
  logOutcome(ctx.logger, jobId, run.runId, outcome);
}

/** Stores the job as the run left it, or removes it when it is done for good. */
async function settleJob(ctx: CronRunContext, job: CronJob, outcome: CronRunOutcome, at: number) {
  const updated = jobAfterRun(job, outcome, at, ctx.nextOf);
  if (updated) await ctx.store.put(updated);
  else await ctx.store.remove(job.id);
  return updated;
}

function logOutcome(logger: Logger, jobId: string, runId: string, outcome: CronRunOutcome): void {
  const log = {
    jobId,
    runId,
    status: outcome.status,
    delivered: outcome.delivered,
    // the text the run recorded; an exception behind it was logged with its stack where it was caught
    ...(outcome.error && { error: outcome.error }),
  };
  if (outcome.status === "ok") logger.info(log, "cron job finished");
  else logger.warn(log, "cron job failed");
}
