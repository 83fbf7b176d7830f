import { storedRunId } from "../agents/uuid-v5.js";
import path from "node:path";
import type { StartTurn, TurnRunner, TurnSource } from "../agents/stored-turn.js";
import type { CronConfig } from "../config/schema/automation.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import type { StatePort } from "../state/state-port.js";
import { formatSessionKey } from "../routing/session-key.js";
import type { CronJob } from "./cron-job.js";
import { openCronJobStore } from "./cron-job-store.js";
import type { CronRunOutcome } from "./cron-run-log.js";
import { openCronRunLog } from "./cron-run-log.js";
import { type CronTimers, createCronScheduler } from "./cron-scheduler.js";
import {
  type CronOutcomeDeps,
  type CronRunEnds,
  createCronOutcomes,
  cronDedupeKey,
  cronOutcomeOf,
  cronTurn,
  cronTurnRunner,
} from "./cron-turns.js";
import type { AutomationDeps } from "./run-announced-turn.js";
import type { CronRunStart } from "./run-cron-job.js";

/** Dependencies of {@link openCron}: the gateway's automation deps plus where cron keeps its files. */
export interface OpenCronDeps
  extends AutomationDeps,
    Pick<CronOutcomeDeps, "runs" | "handedOver" | "handledRun" | "announceOf"> {
  /** `$SWITCHBOARD_HOME` */
  home: string;
  /** the gateway's one state port: the jobs are a table of it */
  state: StatePort;
  config: CronConfig;
  /** the inbox's stored turns: each run is stored there before it runs, and replayed after a crash */
  turns: { start: StartTurn; register(source: TurnSource, runner: TurnRunner): void };
  /** names the schema's runs: a run's id derives from it and the run's dedupe key, the same on every gateway */
  scope: string;
  timers?: CronTimers;
  /** the run registry: read for outcomes, and a replay of a removed job's run is ended there without running */
  runs: CronOutcomeDeps["runs"] & CronRunEnds;
}

/** The session a job's run uses: `isolated` is `agent:<id>:cron:<jobId>`, `main` the agent's main session, else the key given. */
export function cronSessionOf(
  job: Pick<CronJob, "id" | "agentId" | "session">,
  deps: Pick<OpenCronDeps, "parseKey" | "mainKeyOf">,
): { parsed: ParsedSessionKey; agentId: string; isolated: boolean } {
  if (job.session === "isolated")
    return { ...deps.parseKey(formatSessionKey({ kind: "cron", agentId: job.agentId, id: job.id })), isolated: true };
  return { ...deps.parseKey(job.session === "main" ? deps.mainKeyOf(job.agentId) : job.session), isolated: false };
}

/** What a run is recorded with when its stored turn ended without an outcome known here. */
const OUTCOME_LOST = "the run ended but its outcome was not kept (the gateway stopped before it was recorded)";

/**
 * Runs a job as a stored turn of its session (its reply announced through the gate): stored under
 * the due time's dedupe key, then its outcome read from the run (a session that cannot be read fails the run).
 */
async function executeCronJob(
  deps: OpenCronDeps & CronOutcomeDeps,
  job: CronJob,
  run: CronRunStart,
): Promise<CronRunOutcome> {
  let session: ReturnType<typeof cronSessionOf>;
  try {
    session = cronSessionOf(job, deps);
  } catch (err) {
    return { status: "error", error: (err as Error).message, delivered: false, delivery: "none" };
  }
  const dedupeKey = cronDedupeKey(job.id, run.dueAt, run.trigger);
  // A due time stored before (its job's state write lost) answers with the stored run: that one is read.
  const started = await deps.turns.start(cronTurn(job, session), { dedupeKey, runId: run.runId });
  run.stored();
  const outcome = await cronOutcomeOf(deps, started.runId || run.runId, run.closed);
  return outcome ?? { status: "error", error: OUTCOME_LOST, delivered: false, delivery: "none" };
}

/** Opens `$SWITCHBOARD_HOME/cron/` and returns the scheduler whose runs are agent turns announced through the gate. */
export async function openCron(deps: OpenCronDeps) {
  const { logger, now } = deps;
  const dir = path.join(deps.home, "cron");
  const store = await openCronJobStore({ state: deps.state, file: path.join(dir, "jobs.json"), logger });
  const runLog = await openCronRunLog({
    state: deps.state,
    file: path.join(deps.home, "state", "cron-runs.json"),
    legacyDir: path.join(dir, "runs"),
    maxBytes: deps.config.runLogMaxBytes,
    logger,
  });
  const outcomes = createCronOutcomes();
  const reading = { ...deps, outcomes };
  deps.turns.register(
    "cron",
    cronTurnRunner(deps, outcomes, { jobExists: (jobId) => store.get(jobId) !== undefined, runs: deps.runs }),
  );
  return createCronScheduler({
    store,
    runLog,
    logger,
    now,
    ...(deps.timers && { timers: deps.timers }),
    newRunId: (job, dueAt, trigger) => storedRunId("cron", deps.scope, cronDedupeKey(job.id, dueAt, trigger)),
    execute: (job, run) => executeCronJob(reading, job, run),
    resume: (_job, runId, closed) => cronOutcomeOf(reading, runId, closed),
  });
}
