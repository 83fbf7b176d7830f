import { z } from "zod";
import { QUEUE_MODES } from "../config/queue-modes.js";

/** Where replies and announces for a session go. */
export const DeliveryContextSchema = z.object({
  channel: z.string(),
  to: z.string().optional(),
  accountId: z.string().optional(),
  threadId: z.union([z.string(), z.number()]).optional(),
});
export type DeliveryContext = z.infer<typeof DeliveryContextSchema>;

/** Where a session came from (best effort, for people reading lists). */
const SessionOriginSchema = z.looseObject({
  label: z.string().optional(),
  channel: z.string().optional(),
  chatType: z.enum(["direct", "group", "channel"]).optional(),
  from: z.string().optional(),
  to: z.string().optional(),
  accountId: z.string().optional(),
  threadId: z.union([z.string(), z.number()]).optional(),
});
export type SessionOrigin = z.infer<typeof SessionOriginSchema>;

const tokens = z.number().int().min(0).optional();

/**
 * One row of `sessions.json`. Unknown fields (from older versions or other tools) are kept as they
 * are, so reading and rewriting a store never loses data.
 */
export const SessionEntrySchema = z.looseObject({
  /** the current transcript; a reset mints a new one */
  sessionId: z.string().min(1),
  /** ms; the last real turn (never moved by metadata or route updates) */
  updatedAt: z.number(),
  /** ms; when this sessionId started */
  createdAt: z.number().optional(),
  /** transcript file name inside the store folder (topic-aware) */
  sessionFile: z.string().optional(),
  // labelling
  channel: z.string().optional(),
  chatType: z.enum(["direct", "group", "channel"]).optional(),
  displayName: z.string().optional(),
  subject: z.string().optional(),
  groupId: z.string().optional(),
  groupChannel: z.string().optional(),
  space: z.string().optional(),
  label: z.string().optional(),
  origin: SessionOriginSchema.optional(),
  // routing
  deliveryContext: DeliveryContextSchema.optional(),
  lastChannel: z.string().optional(),
  lastTo: z.string().optional(),
  lastAccountId: z.string().optional(),
  lastThreadId: z.union([z.string(), z.number()]).optional(),
  // per-session overrides
  sendPolicy: z.enum(["allow", "deny"]).optional(),
  model: z.string().optional(),
  modelProvider: z.string().optional(),
  providerOverride: z.string().optional(),
  modelOverride: z.string().optional(),
  thinkingLevel: z.string().optional(),
  verboseLevel: z.string().optional(),
  /** `/queue <mode>`: this session's queue mode over `session.queue`; a new session clears it */
  queueMode: z.enum(QUEUE_MODES).optional(),
  reasoningLevel: z.string().optional(),
  responseUsage: z.string().optional(),
  // usage
  inputTokens: tokens,
  outputTokens: tokens,
  totalTokens: tokens,
  contextTokens: tokens,
  compactionCount: z.number().int().min(0).optional(),
  /** ms; the last memory flush turn before an automatic compaction */
  memoryFlushAt: z.number().optional(),
  /** the compactionCount the last memory flush ran in (one flush per compaction cycle) */
  memoryFlushCompactionCount: z.number().int().min(0).optional(),
  // flags
  systemSent: z.boolean().optional(),
  abortedLastRun: z.boolean().optional(),
  spawnedBy: z.string().optional(),
});
export type SessionEntry = z.infer<typeof SessionEntrySchema>;

/** A change to an entry: fields set to `undefined` are removed, fields not named are left alone. */
export type SessionEntryPatch = { [K in keyof SessionEntry]?: SessionEntry[K] | undefined } & Record<string, unknown>;

/** The outcome of {@link applyEntryChange}: the new entry, or what is wrong with the change. */
export type EntryChangeResult = { ok: true; entry: SessionEntry } | { ok: false; issues: string[] };

const entryFields: Record<string, z.ZodType> = SessionEntrySchema.shape;

/**
 * `current` with `change` applied (`undefined` removes a field). A new entry is checked whole; an
 * existing one was checked when it was stored, so only the fields the change names are checked,
 * each by its own schema: the same verdict as checking the whole entry (the schema has no rule
 * across fields), for a fraction of the work on the hot path.
 */
export function applyEntryChange(current: SessionEntry | undefined, change: SessionEntryPatch): EntryChangeResult {
  const merged: Record<string, unknown> = { ...(current ?? {}) };
  for (const [field, value] of Object.entries(change)) {
    if (value === undefined) delete merged[field];
    else merged[field] = value;
  }
  if (!current) {
    const whole = SessionEntrySchema.safeParse(merged);
    return whole.success ? { ok: true, entry: whole.data } : { ok: false, issues: issueLines(whole.error.issues) };
  }
  const issues: string[] = [];
  for (const field of Object.keys(change)) {
    // Own fields only: a stored row may carry an unknown field named like an Object method ("constructor").
    const schema = Object.hasOwn(entryFields, field) ? entryFields[field] : undefined;
    if (!schema) continue; // unknown fields are kept as they are
    const checked = schema.safeParse(merged[field]);
    if (!checked.success)
      issues.push(...issueLines(checked.error.issues.map((issue) => ({ ...issue, path: [field, ...issue.path] }))));
    else if (checked.data === undefined) delete merged[field];
    else merged[field] = checked.data;
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, entry: merged as SessionEntry };
}

function issueLines(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string[] {
  return issues.map((issue) => `${issue.path.map(String).join(".")}: ${issue.message}`);
}
