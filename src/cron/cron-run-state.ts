import type { Logger } from "../logger.js";
import { cronBackoffMs } from "./cron-backoff.js";
import type { CronJob } from "./cron-job.js";
import { CronRequestError } from "./cron-request-error.js";
import type { CronRunOutcome, CronTrigger } from "./cron-run-log.js";
import { nextRunAt } from "./next-run-at.js";

/** The next run of a job after a time, or undefined when it has none. */
export type NextRunOf = (job: CronJob, after: number) => number | undefined;

/** A one-shot job that failed this many times in a row is disabled. */
const ONE_SHOT_MAX_ATTEMPTS = 5;

/** The next run, or undefined (logged) for a schedule croner cannot read, e.g. a hand-edited jobs file. */
export function safeNextRun(logger: Logger): NextRunOf {
  return (job, after) => {
    try {
      return nextRunAt(job.schedule, after, job.createdAt);
    } catch (err) {
      logger.error({ jobId: job.id, err }, "cron job has an unreadable schedule; not scheduled");
      return undefined;
    }
  };
}

/** The job as a run starts: its start on disk (`runningSince`) and its next slot taken from the start time. */
export function jobAtStart(job: CronJob, trigger: CronTrigger, runId: string, startedAt: number, nextOf: NextRunOf) {
  // The next slot is taken from the start time, so missed slots collapse into this one run.
  const next =
    trigger === "manual" ? job.state.nextRunAt : job.schedule.kind === "at" ? undefined : nextOf(job, startedAt);
  const { nextRunAt: _old, ...state } = job.state;
  // `runningSince` on disk: a crash before the end is found at the next start, which reads the run's outcome.
  const started = {
    ...state,
    lastRunAt: startedAt,
    lastRunId: runId,
    runningSince: startedAt,
    runningTrigger: trigger,
  };
  return { ...job, state: { ...started, ...(next !== undefined && { nextRunAt: next }) } };
}

/** The job after a run: failures counted, the next run pushed back by the backoff; undefined when it is done for good. */
export function jobAfterRun(
  job: CronJob,
  outcome: CronRunOutcome,
  endedAt: number,
  nextOf: NextRunOf,
): CronJob | undefined {
  const ok = outcome.status === "ok";
  const failures = ok ? 0 : job.state.consecutiveFailures + 1;
  const oneShot = job.schedule.kind === "at";
  const natural = oneShot ? undefined : (job.state.nextRunAt ?? nextOf(job, endedAt));
  if (ok && oneShot && !job.keepAfterRun) return undefined;
  let next = natural;
  let enabled = job.enabled && !(ok && oneShot);
  if (!ok) {
    const retryAt = endedAt + cronBackoffMs(failures);
    next = natural === undefined ? retryAt : Math.max(natural, retryAt);
    if (oneShot && failures >= ONE_SHOT_MAX_ATTEMPTS) enabled = false;
  }
  const { nextRunAt: _old, lastError: _err, runningSince: _running, runningTrigger: _trigger, ...rest } = job.state;
  const state = {
    ...rest,
    lastStatus: outcome.status,
    lastDelivered: outcome.delivered,
    consecutiveFailures: failures,
    ...(outcome.error !== undefined && { lastError: outcome.error }),
    ...(next !== undefined && enabled && { nextRunAt: next }),
  };
  return { ...job, enabled, state };
}

/** The job with its first next run; a one-shot time already past is refused. */
export function jobWithNextRun(job: CronJob, now: number): CronJob {
  // An `at` job due this very millisecond still runs; recurring jobs start after now.
  const next = nextRunAt(job.schedule, job.schedule.kind === "at" ? now - 1 : now, job.createdAt);
  const { nextRunAt: _old, ...state } = job.state;
  if (next === undefined && job.enabled)
    throw new CronRequestError("INVALID_REQUEST", 'schedule never fires: the "at" time is in the past');
  return { ...job, state: { ...state, ...(next !== undefined && { nextRunAt: next }) } };
}
