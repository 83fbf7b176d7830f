import { z } from "zod";
import { QUEUE_MODES } from "../queue-modes.js";

/** How direct messages map to sessions (docs/session-keys.md). */
const DmScopeSchema = z.enum(["main", "per-peer", "per-channel-peer", "per-account-channel-peer"]);
export type DmScope = z.infer<typeof DmScopeSchema>;

/** Words that are structural inside a session key, so they cannot be a main key. */
export const RESERVED_KEY_WORDS = [
  "dm",
  "group",
  "channel",
  "thread",
  "topic",
  "slash",
  "cron",
  "hook",
  "node",
  "subagent",
  "acp",
  "global",
  "unknown",
] as const;

/** A reset policy: `daily` at an hour of the gateway host's local time, or `idle` after some minutes. */
const ResetPolicySchema = z.strictObject({
  /** default: "daily" (resolved by the reset policy, docs/sessions.md) */
  mode: z.enum(["daily", "idle"]).optional(),
  /** default: 4; hour of the gateway host's local day, 0-23 */
  atHour: z.number().int().min(0).max(23).optional(),
  /** default: none (60 when mode is "idle"); sliding idle window in minutes */
  idleMinutes: z.number().int().min(1).optional(),
});
export type ResetPolicy = z.infer<typeof ResetPolicySchema>;

/** One send-policy rule; every field that is set must match; the first matching deny wins. */
const SendPolicyRuleSchema = z.strictObject({
  action: z.enum(["allow", "deny"]),
  match: z
    .strictObject({
      /** channel name, e.g. "discord" (legacy names `provider` and `surface` are accepted) */
      channel: z.string().trim().toLowerCase().min(1).optional(),
      /** "direct" (alias "dm"), "group" or "channel" */
      chatType: z
        .enum(["direct", "dm", "group", "channel"])
        .transform((v) => (v === "dm" ? "direct" : v))
        .optional(),
      /** prefix of the session key, with or without the `agent:<id>:` part, e.g. "cron:" */
      keyPrefix: z.string().trim().toLowerCase().min(1).optional(),
    })
    .prefault({}),
});

const mainKey = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "must be letters, digits, '-' or '_' (no ':'), e.g. \"main\"")
  .refine((v) => !(RESERVED_KEY_WORDS as readonly string[]).includes(v), {
    message: `must not be a reserved key word (${RESERVED_KEY_WORDS.join(", ")})`,
  });

/** Days a session or file is kept: a whole number, `0` keeps it forever. */
const retentionDays = z.number().int().min(0).max(36_500);

/** `session.retention`: days each automated session kind is kept after its last turn (docs/sessions.md). */
const RetentionSchema = z.strictObject({
  /** default: 30; webhook sessions (`agent:<id>:hook:<uuid>`) */
  hook: retentionDays.default(30),
  /** default: 30; isolated cron runs (`agent:<id>:cron:<jobId>`) */
  cron: retentionDays.default(30),
  /** default: 30; sub-agent sessions the registry did not archive */
  subagent: retentionDays.default(30),
});
export type RetentionConfig = z.infer<typeof RetentionSchema>;

/** What happens to a message beyond `session.queue.cap`. */
const QUEUE_OVERFLOWS = ["summarize", "drop-oldest", "refuse"] as const;

const queueMode = z.enum(QUEUE_MODES);
const debounceMs = z.number().int().min(0).max(60_000);
const queueCap = z.number().int().min(1).max(1_000);
const queueOverflow = z.enum(QUEUE_OVERFLOWS);

/** An agent's or a channel's override of `session.queue`: any of its fields. */
const QueueOverrideSchema = z.strictObject({
  mode: queueMode.optional(),
  debounceMs: debounceMs.optional(),
  cap: queueCap.optional(),
  overflow: queueOverflow.optional(),
});
/** One override of `session.queue.channels` or `.agents`. */
export type QueueOverride = z.infer<typeof QueueOverrideSchema>;

/** `session.queue`: the defaults, then per channel and per agent id (wins), field by field. */
const QueueConfigSchema = z.strictObject({
  /** default: "followup"; each message its own turn, in order (collect, steer, interrupt: docs/config.md) */
  mode: queueMode.default("followup"),
  /** default: 500; "collect" starts the collected turn once no message came for this long */
  debounceMs: debounceMs.default(500),
  /** default: 20; messages that may wait per session (the running turn's not counted) */
  cap: queueCap.default(20),
  /** default: "summarize"; a message beyond `cap`: the oldest waiting one shortened to a line, the oldest dropped, or the new one refused */
  overflow: queueOverflow.default("summarize"),
  /** default: {}; per channel of the message ("whatsapp"), field by field over the fields above */
  channels: z.record(z.string().trim().toLowerCase(), QueueOverrideSchema).default({}),
  /** default: {}; per agent id, field by field over the fields above and `channels` */
  agents: z.record(z.string().trim().toLowerCase(), QueueOverrideSchema).default({}),
});
export type QueueConfig = z.infer<typeof QueueConfigSchema>;

/** `session.*`: keys, DM scope, reset, send policy and agent-to-agent limits. */
export const SessionConfigSchema = z.strictObject({
  /** default: "per-sender"; "global" puts every chat of an agent into the one `global` session */
  scope: z.enum(["per-sender", "global"]).default("per-sender"),
  /** default: "main"; every DM shares the agent's main session (use "per-channel-peer" when several people DM the bot) */
  dmScope: DmScopeSchema.default("main"),
  /** default: "main"; the last part of the main session key `agent:<agentId>:<mainKey>` */
  mainKey: mainKey.default("main"),
  /** default: {}; canonical person -> ids (`"<channel>:<id>"` or a bare id on every channel) */
  identityLinks: z.record(z.string().trim().min(1), z.array(z.string().trim().min(1))).default({}),
  /** default: daily at 4 (unset here; resolved per session, docs/sessions.md) */
  reset: ResetPolicySchema.optional(),
  /** default: {}; per session type overrides */
  resetByType: z
    .strictObject({
      dm: ResetPolicySchema.optional(),
      group: ResetPolicySchema.optional(),
      thread: ResetPolicySchema.optional(),
    })
    .optional(),
  /** default: {}; per channel overrides, the only source for that channel when set */
  resetByChannel: z
    .record(z.string().regex(/^[a-z0-9_-]+$/, "must be a lowercase channel name"), ResetPolicySchema)
    .optional(),
  /** default: none; legacy idle-only window in minutes (prefer `reset.idleMinutes`) */
  idleMinutes: z.number().int().min(1).optional(),
  /** default: ["/new", "/reset"]; extra triggers ("/fresh"); /new and /reset always work */
  resetTriggers: z.array(z.string().trim().min(1)).default(["/new", "/reset"]),
  /** default: `$SWITCHBOARD_HOME/agents/{agentId}/sessions/sessions.json`; `{agentId}` is substituted */
  store: z.string().trim().min(1).optional(),
  /** default: allow everything; rules decide which sessions may deliver to a channel */
  sendPolicy: z
    .strictObject({
      /** default: "allow" */
      default: z.enum(["allow", "deny"]).default("allow"),
      /** default: []; evaluated in order, a matching deny wins */
      rules: z.array(SendPolicyRuleSchema).default([]),
    })
    .prefault({}),
  /** default: 30 days per kind; main, DM and group sessions are never removed automatically */
  retention: RetentionSchema.prefault({}),
  /** default: 30; days a transcript no session points at any more (left by /new, /reset, expiry, or set aside) is kept; 0 keeps forever */
  archiveRetention: retentionDays.default(30),
  /** default: followup, 500 ms, cap 20, summarize; how messages that arrive during a turn are answered */
  queue: QueueConfigSchema.prefault({}),
  agentToAgent: z
    .strictObject({
      /** default: 5; reply-back turns between two agents after a sessions_send, 0-5 */
      maxPingPongTurns: z.number().int().min(0).max(5).default(5),
      /** default: 8; messages one chain of agent-to-agent sends may pass along, across any number of agents */
      maxHops: z.number().int().min(1).max(50).default(8),
    })
    .prefault({}),
});
export type SessionConfig = z.infer<typeof SessionConfigSchema>;
