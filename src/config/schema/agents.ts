import { z } from "zod";
import { CompactionConfigSchema, ToolPolicySchema, WorkspaceDefaultsSchema } from "./agent-extras.js";

/** An agent id as it appears in keys: lowercase letters, digits, '-' and '_', at most 64 characters. */
const AgentIdSchema = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "must be 1-64 letters, digits, '-' or '_', starting with a letter or digit");

/** A model reference `provider/model` ("offline/echo", "openai/gpt-4o-mini") or an alias of `models.aliases`. */
const ModelRefSchema = z
  .string()
  .trim()
  .regex(
    /^[a-z0-9][a-z0-9._-]*(\/\S+)?$/i,
    'must be "provider/model" (e.g. "openai/gpt-4o-mini") or an alias from models.aliases',
  );

const SandboxSchema = z.strictObject({
  /** default: "off"; which sessions run sandboxed: none, every session but the main one, or all */
  mode: z.enum(["off", "non-main", "all"]).default("off"),
  /** default: "spawned"; a sandboxed session's session tools see only the sessions it spawned */
  sessionToolsVisibility: z.enum(["spawned", "all"]).default("spawned"),
});

/** `agents.defaults`: settings every agent starts from. */
const AgentDefaultsSchema = z.strictObject({
  /** default: "offline/echo", the built-in deterministic model that needs no network */
  model: ModelRefSchema.default("offline/echo"),
  /**
   * default: 256; turns answering channel messages that run at once across sessions (from a turn's
   * start to its reply's delivery; the next waits at the head of its session's lane). A flood of
   * chats then runs a few hundred turns deep instead of all at once (docs/performance.md); a lower
   * value bounds calls to a rate-limited model. Turns that tools, cron, hooks and gateway clients
   * start take no slot, and a chat turn gives its slot back while it waits for another session's turn.
   */
  maxConcurrent: z.number().int().min(1).max(100_000).default(256),
  subagents: z
    .strictObject({
      /** default: 60; a finished sub-agent session is archived this many minutes after its announce */
      archiveAfterMinutes: z.number().int().min(1).default(60),
      /** default: "full"; the announce's stats line: all of it, runtime and tokens only, or none */
      announceStats: z.enum(["full", "brief", "off"]).default("full"),
      /** default: 8; sub-agent runs in parallel */
      maxConcurrent: z.number().int().min(1).default(8),
    })
    .prefault({}),
  sandbox: SandboxSchema.prefault({}),
  compaction: CompactionConfigSchema.prefault({}),
  workspace: WorkspaceDefaultsSchema.prefault({}),
});

/** One entry of `agents.list`. */
const AgentEntrySchema = z.strictObject({
  id: AgentIdSchema,
  /** default: false; the agent that gets messages no binding claims (else the first entry) */
  default: z.boolean().default(false),
  /** default: the id; shown in agents_list and /status */
  name: z.string().trim().min(1).optional(),
  /** default: agents.defaults.model */
  model: ModelRefSchema.optional(),
  subagents: z
    .strictObject({
      /** default: only this agent; agent ids sessions_spawn may target, ["*"] for any */
      allowAgents: z.array(z.string().trim().min(1)).optional(),
    })
    .optional(),
  /** default: $SWITCHBOARD_HOME/agents/<id>/workspace; the agent's files (AGENTS.md, USER.md, MEMORY.md, memory/) */
  workspace: z.string().trim().min(1).optional(),
  /** default: tools.allow / tools.deny; this agent's tool policy on top of them */
  tools: ToolPolicySchema.optional(),
  /** default: agents.defaults.sandbox, field by field */
  sandbox: z
    .strictObject({
      mode: z.enum(["off", "non-main", "all"]).optional(),
      sessionToolsVisibility: z.enum(["spawned", "all"]).optional(),
    })
    .optional(),
});

/** `agents.*`: defaults plus the list of agents. */
export const AgentsConfigSchema = z
  .strictObject({
    defaults: AgentDefaultsSchema.prefault({}),
    /** default: []; with no list there is one agent, `main` */
    list: z.array(AgentEntrySchema).default([]),
  })
  .superRefine((agents, ctx) => {
    const seen = new Set<string>();
    agents.list.forEach((agent, index) => {
      if (seen.has(agent.id)) {
        ctx.addIssue({ code: "custom", path: ["list", index, "id"], message: `duplicate agent id "${agent.id}"` });
      }
      seen.add(agent.id);
    });
    const defaults = agents.list.filter((agent) => agent.default);
    if (defaults.length > 1) {
      ctx.addIssue({
        code: "custom",
        path: ["list"],
        message: `more than one default agent (${defaults.map((a) => a.id).join(", ")}); mark exactly one with default: true`,
      });
    }
  });

/** How far a turn's session tools reach: its own session, + what it spawned, its agent's sessions, all. */
const SessionVisibilitySchema = z.enum(["self", "spawned", "agent", "all"]);
export type SessionVisibility = z.infer<typeof SessionVisibilitySchema>;

/** The visibility of turns triggered by owners and by everyone else. */
const VisibilityByTierSchema = z.strictObject({
  /** default: "agent"; turns an owner (or a gateway client) triggered */
  owners: SessionVisibilitySchema.optional(),
  /** default: "spawned"; turns a guest, talker or command user triggered */
  others: SessionVisibilitySchema.optional(),
});

/** `tools.*`: the tool policy of every agent, agent-to-agent policy, session tool visibility and the sub-agent tool set. */
export const ToolsConfigSchema = z.strictObject({
  /** default: unset (every tool); when set, only these tools (names or "<server>__*") */
  allow: z.array(z.string().trim().min(1)).optional(),
  /** default: []; tools no agent gets (names or "<server>__*") */
  deny: z.array(z.string().trim().min(1)).default([]),
  sessions: z
    .strictObject({
      /** default: { owners: "agent", others: "spawned" } */
      visibility: VisibilityByTierSchema.prefault({}),
      /** default: {}; per agent id, field by field over `visibility` (wins over `channels`) */
      agents: z
        .record(z.string().trim().toLowerCase(), z.strictObject({ visibility: VisibilityByTierSchema }))
        .default({}),
      /** default: {}; per channel of the triggering message ("telegram"), field by field over `visibility` */
      channels: z
        .record(z.string().trim().toLowerCase(), z.strictObject({ visibility: VisibilityByTierSchema }))
        .default({}),
    })
    .prefault({}),
  agentToAgent: z
    .strictObject({
      /** default: false; let sessions of one agent reach sessions of another */
      enabled: z.boolean().default(false),
      /** default: [] (any agent when enabled); agent ids or globs like "ops-*" */
      allow: z.array(z.string().trim().min(1)).default([]),
    })
    .prefault({}),
  guests: z
    .strictObject({
      /**
       * default: [] (none); the tools besides the session tools that a turn someone other than an
       * owner triggered may use (a talker, a group member, a webhook): names or "<server>__*"
       */
      allow: z.array(z.string().trim().min(1)).default([]),
    })
    .prefault({}),
  subagents: z
    .strictObject({
      tools: z
        .strictObject({
          /** default: unset (every tool but the session tools); when set, only these tools */
          allow: z.array(z.string().trim().min(1)).optional(),
          /** default: []; tools taken away from sub-agents on top of the session tools */
          deny: z.array(z.string().trim().min(1)).default([]),
        })
        .prefault({}),
    })
    .prefault({}),
});
