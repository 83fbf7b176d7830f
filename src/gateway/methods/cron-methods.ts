import { z } from "zod";
import { type CronJobPatch, CronJobPatchSchema, CronJobSpecSchema } from "../../cron/cron-job.js";
import { CronRequestError } from "../../cron/cron-request-error.js";
import { cronSessionOf } from "../../cron/open-cron.js";
import { cronExpressionError } from "../../cron/next-run-at.js";
import { parseDeliveryTarget } from "../../delivery/delivery-target.js";
import { isSwitchboardError } from "../../errors.js";
import type { GatewayCore } from "../gateway-core.js";
import { GatewayError, GatewayErrorCodes } from "../protocol.js";
import { defineMethod } from "./method.js";

const bad = (message: string) => new GatewayError(GatewayErrorCodes.INVALID_REQUEST, message);

/** Checks what the schema cannot: the agent, the cron expression, the session, the target, the model. */
function checkSpec(core: GatewayCore, spec: CronJobPatch, agentId: string): void {
  if (!core.agentIds().includes(agentId))
    throw bad(`agentId: unknown agent "${agentId}" (agents: ${core.agentIds().join(", ")})`);
  if (spec.schedule?.kind === "cron") {
    const problem = cronExpressionError(spec.schedule.expr, spec.schedule.tz);
    if (problem) throw bad(`schedule.expr: ${problem}`);
  }
  try {
    if (spec.session !== undefined) cronSessionOf({ id: "check", agentId, session: spec.session }, core);
  } catch (err) {
    // The one "not a session key" error, as every other place a key is named answers it.
    if (isSwitchboardError(err, "INVALID_SESSION_KEY")) throw err;
    throw bad(`session: ${(err as Error).message}`);
  }
  if (spec.delivery?.mode === "announce" && spec.delivery.to.toLowerCase() !== "last") {
    try {
      parseDeliveryTarget(spec.delivery.to, core.targetsOf);
    } catch (err) {
      throw bad(`delivery.to: ${(err as Error).message}`);
    }
  }
  if (spec.model) {
    try {
      core.resolveModelRef(spec.model);
    } catch (err) {
      throw bad(`model: ${(err as Error).message}`);
    }
  }
}

/** Scheduler refusals as gateway errors. */
async function guarded<T>(work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof CronRequestError)) throw err;
    throw new GatewayError(
      err.code === "NOT_FOUND" ? GatewayErrorCodes.NOT_FOUND : GatewayErrorCodes.INVALID_REQUEST,
      err.message,
    );
  }
}

/** `cron.list`: every job with its schedule, next run and last outcome. */
export const cronList = defineMethod({
  name: "cron.list",
  params: z.strictObject({}),
  async handle(core) {
    return { jobs: core.cron.list().map((job) => ({ ...job, running: core.cron.runningRun(job.id) })) };
  },
});

/** `cron.add`: a new job; the agent defaults to the default agent. */
export const cronAdd = defineMethod({
  name: "cron.add",
  params: CronJobSpecSchema,
  async handle(core, spec) {
    const agentId = spec.agentId ?? core.defaultAgentId();
    checkSpec(core, spec, agentId);
    return { job: await guarded(() => core.cron.add({ ...spec, agentId })) };
  },
});

/** `cron.update`: changes the fields given in `patch`. */
export const cronUpdate = defineMethod({
  name: "cron.update",
  params: z.strictObject({ id: z.string().min(1), patch: CronJobPatchSchema }),
  async handle(core, { id, patch }) {
    const job = core.cron.get(id);
    if (!job) throw new GatewayError(GatewayErrorCodes.NOT_FOUND, `unknown cron job "${id}"; cron.list shows the jobs`);
    checkSpec(core, patch, patch.agentId ?? job.agentId);
    return { job: await guarded(() => core.cron.update(id, patch)) };
  },
});

/** `cron.remove`: deletes a job (its run log stays). */
export const cronRemove = defineMethod({
  name: "cron.remove",
  params: z.strictObject({ id: z.string().min(1) }),
  async handle(core, { id }) {
    if (!(await core.cron.remove(id)))
      throw new GatewayError(GatewayErrorCodes.NOT_FOUND, `unknown cron job "${id}"; cron.list shows the jobs`);
    return { removed: true, id };
  },
});

/** `cron.run`: runs a job now and returns its runId at once (`agent.wait` waits for it). */
export const cronRun = defineMethod({
  name: "cron.run",
  params: z.strictObject({ id: z.string().min(1) }),
  async handle(core, { id }) {
    return { id, ...(await guarded(() => core.cron.runNow(id))) };
  },
});

/** `cron.runs`: a job's newest runs, newest first. */
export const cronRuns = defineMethod({
  name: "cron.runs",
  params: z.strictObject({ id: z.string().min(1), limit: z.number().int().min(1).max(500).default(20) }),
  async handle(core, { id, limit }) {
    return { id, runs: await core.cron.runs(id, limit) };
  },
});
