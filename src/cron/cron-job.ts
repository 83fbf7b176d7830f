import { z } from "zod";
import { RUN_ENDS } from "../agents/run-end.js";
import { CRON_NAME_RULE, isOneLineName } from "./cron-name.js";

/** How a cron run ended: a run end, or `skipped` (nothing ran). Stored in jobs.json and the run logs. */
export const CronRunStatusSchema = z.enum([...RUN_ENDS, "skipped"]);

/** Why a run started: schedule, catch-up (missed while the gateway was down), manual. */
export const CronTriggerSchema = z.enum(["schedule", "catch-up", "manual"]);

/** True when `zone` is an IANA time zone this runtime knows. */
function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** When a job runs: a 5-field cron expression in a time zone, a fixed interval, or once. */
const CronScheduleSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("cron"),
    /** 5 fields: minute hour day-of-month month day-of-week, e.g. "0 8 * * *" */
    expr: z
      .string()
      .trim()
      .refine((e) => e.split(/\s+/).length === 5, 'must have 5 fields, e.g. "0 8 * * *"'),
    /** IANA zone, e.g. "Europe/Berlin"; default "UTC" */
    tz: z.string().trim().refine(isTimeZone, "must be an IANA time zone, e.g. Europe/Berlin").default("UTC"),
  }),
  z.strictObject({
    kind: z.literal("every"),
    /** ms between runs, at least 1 s */
    everyMs: z.number().int().min(1000),
    /** ms; runs fall on anchor + k * everyMs; default: when the job was created */
    anchorMs: z.number().int().optional(),
  }),
  z.strictObject({
    kind: z.literal("at"),
    /** ms since the epoch */
    atMs: z.number().int(),
  }),
]);
export type CronSchedule = z.infer<typeof CronScheduleSchema>;

/** Where a run's reply goes: announced to a target (`telegram:<chatId>[:topic:<n>]`, `last`), or nowhere. */
const CronDeliverySchema = z.discriminatedUnion("mode", [
  z.strictObject({ mode: z.literal("announce"), to: z.string().trim().min(1) }),
  z.strictObject({ mode: z.literal("none") }),
]);

/** A job's run state, kept with the job so it survives restarts. */
const CronJobStateSchema = z.looseObject({
  /** ms; the next due run */
  nextRunAt: z.number().optional(),
  lastRunAt: z.number().optional(),
  lastStatus: CronRunStatusSchema.optional(),
  lastError: z.string().optional(),
  lastRunId: z.string().optional(),
  lastDelivered: z.boolean().optional(),
  consecutiveFailures: z.number().int().min(0).default(0),
  /** ms; set while a run is in progress (with `lastRunId`): still set at start means a crash interrupted it */
  runningSince: z.number().optional(),
  /** why the run in progress started: recorded with its outcome, also when a restart finds it */
  runningTrigger: CronTriggerSchema.optional(),
});

/** A stored name: jobs written before names were checked (one with a newline) still load; `cron list` quotes them. */
const storedName = z.string().trim().min(1).max(100);
/** A name a client sets, checked before it is trimmed, so a trailing newline is refused as the CLI refuses it. */
const name = z.string().refine(isOneLineName, `name ${CRON_NAME_RULE}`).trim().min(1).max(100);
const message = z.string().refine((m) => m.trim() !== "", "message required");
const agentId = z.string().trim().toLowerCase().min(1);
const session = z.string().trim().min(1);
const model = z.string().trim().min(1);
const timeoutSeconds = z
  .number()
  .int()
  .min(1)
  .max(24 * 3600);

/** The fields a person sets when adding a job. */
export const CronJobSpecSchema = z.strictObject({
  name,
  schedule: CronScheduleSchema,
  /** default: the default agent */
  agentId: agentId.optional(),
  /** the prompt each run sends to the agent */
  message,
  /** "isolated" (default: `agent:<id>:cron:<jobId>`, a new sessionId per run), "main", or a session key */
  session: session.default("isolated"),
  /** `provider/model` or an alias; default the agent's model */
  model: model.optional(),
  timeoutSeconds: timeoutSeconds.optional(),
  /** default: none */
  delivery: CronDeliverySchema.default({ mode: "none" }),
  /** default: true */
  enabled: z.boolean().default(true),
  /** one-shot jobs only: keep the job after it succeeded; default false (removed) */
  keepAfterRun: z.boolean().default(false),
});
export type CronJobSpec = z.infer<typeof CronJobSpecSchema>;

/** A change to a job (`cron.update`): only the fields given change; no defaults are filled in. */
export const CronJobPatchSchema = z.strictObject({
  name: name.optional(),
  schedule: CronScheduleSchema.optional(),
  agentId: agentId.optional(),
  message: message.optional(),
  session: session.optional(),
  model: model.optional(),
  timeoutSeconds: timeoutSeconds.optional(),
  delivery: CronDeliverySchema.optional(),
  enabled: z.boolean().optional(),
  keepAfterRun: z.boolean().optional(),
});
export type CronJobPatch = z.infer<typeof CronJobPatchSchema>;

/** One stored job. */
export const CronJobSchema = CronJobSpecSchema.extend({
  name: storedName,
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/),
  agentId: z.string().min(1),
  createdAt: z.number(),
  updatedAt: z.number(),
  state: CronJobStateSchema.prefault({}),
});
export type CronJob = z.infer<typeof CronJobSchema>;
