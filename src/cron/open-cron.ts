import path from "node:path";
import type { CronConfig } from "../config/schema/automation.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import type { StatePort } from "../state/state-port.js";
import { formatSessionKey } from "../routing/session-key.js";
import type { CronJob } from "./cron-job.js";
import { openCronJobStore } from "./cron-job-store.js";
import type { CronRunOutcome } from "./cron-run-log.js";
import { openCronRunLog } from "./cron-run-log.js";
import { type CronTimers, createCronScheduler } from "./cron-scheduler.js";
import { type AutomationDeps, runAnnouncedTurn } from "./run-announced-turn.js";

/** Dependencies of {@link openCron}: the gateway's automation deps plus where cron keeps its files. */
export interface OpenCronDeps extends AutomationDeps {
  /** `$SWITCHBOARD_HOME` */
  home: string;
  /** the gateway's one state port: the jobs are a table of it */
  state: StatePort;
  config: CronConfig;
  timers?: CronTimers;
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

/** Runs a job as an agent turn whose reply is announced through the gate (a session that cannot be read fails the run). */
async function executeCronJob(deps: AutomationDeps, job: CronJob, runId: string): Promise<CronRunOutcome> {
  let session: ReturnType<typeof cronSessionOf>;
  try {
    session = cronSessionOf(job, deps);
  } catch (err) {
    return { status: "error", error: (err as Error).message, delivered: false, delivery: "none" };
  }
  return runAnnouncedTurn(deps, {
    runId,
    ...session,
    prompt: job.message,
    model: job.model,
    timeoutMs: job.timeoutSeconds === undefined ? undefined : job.timeoutSeconds * 1000,
    announceTo: job.delivery.mode === "announce" ? job.delivery.to : undefined,
    provenance: { kind: "system", channel: "cron" },
    // Only owners (gateway clients, the CLI, /cron) create jobs.
    owner: true,
  });
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
  return createCronScheduler({
    store,
    runLog,
    logger,
    now,
    ...(deps.timers && { timers: deps.timers }),
    execute: (job, runId) => executeCronJob(deps, job, runId),
  });
}
