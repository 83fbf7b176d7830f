import { chatErrorText } from "../errors.js";
import type { Logger } from "../logger.js";
import type { CronJob } from "./cron-job.js";
import type { CronJobStore } from "./cron-job-store.js";
import type { CronRunLog, CronRunOutcome, CronTrigger } from "./cron-run-log.js";
import { type NextRunOf, jobAfterRun, jobAtStart } from "./cron-run-state.js";

/** What running and recording one job needs. */
export interface CronRunContext {
  store: CronJobStore;
  runLog: CronRunLog;
  logger: Logger;
  now: () => number;
  /** runs one job to its end (the agent turn and its announce) */
  execute: (job: CronJob, runId: string) => Promise<CronRunOutcome>;
  nextOf: NextRunOf;
}

/** What a run the gateway's end interrupted is recorded with. */
const INTERRUPTED = "the gateway stopped while this run was in progress";

/**
 * Runs one job and records it: its start on disk, the outcome on the job (backoff, removal of a
 * finished one-shot job), the run log and a log line. Never rejects. The job is executed before
 * the first await, so the runId handed out is already a known run.
 */
export async function runCronJob(ctx: CronRunContext, job: CronJob, trigger: CronTrigger, runId: string) {
  const startedAt = ctx.now();
  const execution = ctx.execute(job, runId).catch(
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
    const outcome = await execution;
    const endedAt = ctx.now();
    const current = ctx.store.get(job.id);
    if (current) await settleJob(ctx, current, outcome, endedAt);
    await ctx.runLog.append({ jobId: job.id, runId, startedAt, endedAt, trigger, ...outcome });
    logOutcome(ctx.logger, job.id, runId, outcome);
  } catch (err) {
    ctx.logger.error({ jobId: job.id, runId, err }, "cron run bookkeeping failed");
  }
}

/** A run the gateway's end interrupted (crash, or a stop that outlasted its drain): a failed run, logged and backed off. */
export async function recordInterrupted(ctx: CronRunContext, job: CronJob, at: number): Promise<CronJob | undefined> {
  const outcome: CronRunOutcome = { status: "error", error: INTERRUPTED, delivered: false, delivery: "none" };
  const updated = await settleJob(ctx, job, outcome, at);
  const runId = job.state.lastRunId ?? "unknown";
  await ctx.runLog.append({ jobId: job.id, runId, startedAt: job.state.runningSince!, endedAt: at, ...outcome });
  ctx.logger.warn({ jobId: job.id, runId: job.state.lastRunId, error: INTERRUPTED }, "cron job failed");
  return updated;
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
