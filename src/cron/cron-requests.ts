import type { CronJob, CronJobPatch, CronJobSpec } from "./cron-job.js";
import type { CronJobStore } from "./cron-job-store.js";
import { CronRequestError } from "./cron-request-error.js";
import type { CronRunLog, CronRunRecord, CronTrigger } from "./cron-run-log.js";
import { jobWithNextRun } from "./cron-run-state.js";

/** The scheduler's parts the requests use: the jobs, the runs in progress, and the timer. */
export interface CronRequestCore {
  store: CronJobStore;
  runLog: CronRunLog;
  now: () => number;
  newJobId: (name: string) => string;
  running: ReadonlyMap<string, { runId: string }>;
  /** re-arms the timer for the earliest due job */
  arm(): void;
  /** starts a run now; its runId, and when it is stored (a known run from then on) */
  launch(job: CronJob, trigger: CronTrigger): { runId: string; stored: Promise<void> };
}

function requiredJob(core: CronRequestCore, id: string): CronJob {
  const job = core.store.get(id);
  if (!job) throw new CronRequestError("NOT_FOUND", `unknown cron job "${id}"; cron.list shows the jobs`);
  return job;
}

async function storeAndArm(core: CronRequestCore, job: CronJob): Promise<CronJob> {
  await core.store.put(job);
  core.arm();
  return job;
}

async function addJob(core: CronRequestCore, spec: CronJobSpec & { agentId: string }): Promise<CronJob> {
  const at = core.now();
  let id = core.newJobId(spec.name);
  while (core.store.get(id)) id = core.newJobId(spec.name);
  const job = { ...spec, id, createdAt: at, updatedAt: at, state: { consecutiveFailures: 0 } };
  return storeAndArm(core, jobWithNextRun(job, at));
}

async function updateJob(core: CronRequestCore, id: string, patch: CronJobPatch): Promise<CronJob> {
  const current = requiredJob(core, id);
  const changes = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as CronJobPatch;
  const job: CronJob = { ...current, ...changes, updatedAt: core.now() };
  if (!patch.schedule && !(patch.enabled && !current.enabled)) return storeAndArm(core, job);
  return storeAndArm(core, jobWithNextRun({ ...job, state: { ...job.state, consecutiveFailures: 0 } }, core.now()));
}

async function runJobNow(core: CronRequestCore, id: string): Promise<{ runId: string }> {
  const job = requiredJob(core, id);
  const busy = core.running.get(id);
  if (busy)
    throw new CronRequestError("BUSY", `cron job "${id}" is running (run ${busy.runId}); try again when it ends`);
  // Launched before the first await: a second request in the same tick finds it busy.
  const { runId, stored } = core.launch(job, "manual");
  await stored;
  return { runId };
}

/** The requests gateway clients, the CLI and `/cron` make of the scheduler: list, add, update, remove, run now. */
export function cronRequests(core: CronRequestCore) {
  return {
    list: (): CronJob[] => core.store.list(),
    get: (id: string): CronJob | undefined => core.store.get(id),
    /** The run in progress of a job, if any. */
    runningRun: (id: string): string | undefined => core.running.get(id)?.runId,
    /** Adds a job (its agent already resolved) and arms the timer. */
    add: (spec: CronJobSpec & { agentId: string }): Promise<CronJob> => addJob(core, spec),
    /** Changes the named fields; a new schedule or re-enabling recomputes the next run. */
    update: (id: string, patch: CronJobPatch): Promise<CronJob> => updateJob(core, id, patch),
    async remove(id: string): Promise<boolean> {
      const removed = await core.store.remove(id);
      core.arm();
      return removed;
    },
    /** Runs a job now (enabled or not); its runId once the run is stored (`agent.wait` finds it then). */
    runNow: (id: string): Promise<{ runId: string }> => runJobNow(core, id),
    /** The newest runs of a job, newest first. */
    runs: (id: string, limit?: number): Promise<CronRunRecord[]> => core.runLog.read(id, limit),
  };
}
