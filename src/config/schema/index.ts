import { isIP } from "node:net";
import { z } from "zod";
import { McpConfigSchema } from "./agent-extras.js";
import { AgentsConfigSchema, ToolsConfigSchema } from "./agents.js";
import { CronConfigSchema, HooksConfigSchema } from "./automation.js";
import { BindingSchema } from "./bindings.js";
import { type ChannelConfigDefinition, channelsSchema } from "../channel-table.js";
import { SessionConfigSchema } from "./session.js";
import { StateConfigSchema } from "./state.js";

/** `commands.*`: how chat commands are recognised. */
const CommandsConfigSchema = z.strictObject({
  /** default: true; typed commands such as "/status" are recognised */
  text: z.boolean().default(true),
  /** default: true; register native slash commands where the platform has them */
  native: z.boolean().default(true),
  /** default: true; a bare "stop"/"abort" from an authorized sender aborts the running turn */
  bareAbortWords: z.boolean().default(true),
});

/** `gateway.*`: where the gateway listens and who may talk to it. */
const GatewayConfigSchema = z.strictObject({
  /** default: "127.0.0.1"; any other address requires `auth.token` */
  bind: z.string().trim().min(1).default("127.0.0.1"),
  /** default: 18789 */
  port: z.number().int().min(0).max(65_535).default(18_789),
  auth: z
    .strictObject({
      /** secret; required by clients when set, and required for a non-loopback bind */
      token: z.string().min(16, "must be at least 16 characters").optional(),
    })
    .prefault({}),
  /** default: []; browser origins besides the gateway's own page that may connect, e.g. "https://ui.example.com" */
  allowedOrigins: z
    .array(
      z
        .string()
        .trim()
        .regex(/^https?:\/\/[^/\s]+\/?$/i, 'must be an origin like "https://ui.example.com"'),
    )
    .default([]),
  /** default: []; Host names besides loopback the gateway answers without a token (DNS rebinding guard) */
  allowedHosts: z.array(z.string().trim().min(1)).default([]),
  /** default: []; reverse proxies (IP addresses) whose `X-Forwarded-For` names the client, so failed logins count per client */
  trustedProxies: z
    .array(
      z
        .string()
        .trim()
        .refine((address) => isIP(address) !== 0, 'must be an IP address, e.g. "127.0.0.1"'),
    )
    .default([]),
});

const ProviderSchema = z.strictObject({
  /** default: the provider's public API; e.g. "http://127.0.0.1:11434/v1" for Ollama */
  baseUrl: z.url().optional(),
  /** secret; else OPENAI_API_KEY / ANTHROPIC_API_KEY */
  apiKey: z.string().min(1).optional(),
});

/** `models.*`: provider endpoints and short names for `provider/model` references. */
const ModelsConfigSchema = z.strictObject({
  providers: z
    .strictObject({
      /** any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio); else OPENAI_BASE_URL */
      openai: ProviderSchema.optional(),
      anthropic: ProviderSchema.optional(),
    })
    .prefault({}),
  /** default: {}; short names, e.g. { mini: "openai/gpt-4o-mini" }, usable in config and `/new <model>` */
  aliases: z
    .record(z.string().trim().min(1), z.string().regex(/^[a-z0-9][a-z0-9._-]*\/\S+$/i, 'must be "provider/model"'))
    .default({}),
  /** default: 8; tool-call steps per agent turn */
  maxSteps: z.number().int().min(1).max(50).default(8),
  /** default: {}; context window in tokens per "provider/model", over the built-in table (e.g. { "openai/my-model": 32000 }) */
  contextWindows: z.record(z.string().trim().min(1), z.number().int().min(256)).default({}),
  /** default: 600; seconds one agent turn may take */
  timeoutSeconds: z.number().int().min(1).default(600),
});

/** `logging.*`. */
const LoggingConfigSchema = z.strictObject({
  /** default: "info" */
  level: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
});

/** Every section of `switchboard.json5`, `channels.<id>` composed from the channel table. */
function sectionsSchema(table?: readonly ChannelConfigDefinition[]) {
  return z.strictObject({
    /** editor hint, ignored */
    $schema: z.string().optional(),
    session: SessionConfigSchema.prefault({}),
    agents: AgentsConfigSchema.prefault({}),
    tools: ToolsConfigSchema.prefault({}),
    /** which agent gets which messages (precedence: docs/session-keys.md) */
    bindings: z.array(BindingSchema).default([]),
    channels: channelsSchema(table).prefault({}),
    commands: CommandsConfigSchema.prefault({}),
    gateway: GatewayConfigSchema.prefault({}),
    models: ModelsConfigSchema.prefault({}),
    logging: LoggingConfigSchema.prefault({}),
    mcp: McpConfigSchema.prefault({}),
    cron: CronConfigSchema.prefault({}),
    hooks: HooksConfigSchema.prefault({}),
    state: StateConfigSchema.prefault({}),
  });
}

type Sections = z.infer<ReturnType<typeof sectionsSchema>>;

/** Every model reference is "provider/model" or an alias of `models.aliases`. */
function checkModels(config: Sections, ctx: z.RefinementCtx): void {
  const aliases = Object.keys(config.models.aliases);
  const checkModel = (model: string | undefined, path: PropertyKey[]) => {
    if (model === undefined || model.includes("/") || aliases.includes(model)) return;
    const known = aliases.length ? `aliases: ${aliases.join(", ")}` : "no aliases are defined in models.aliases";
    ctx.addIssue({ code: "custom", path, message: `"${model}" is neither "provider/model" nor an alias (${known})` });
  };
  checkModel(config.agents.defaults.model, ["agents", "defaults", "model"]);
  for (const [index, agent] of config.agents.list.entries())
    checkModel(agent.model, ["agents", "list", index, "model"]);
}

/** A hook token only runs hooks, so it must not also open the gateway. */
function checkHookToken(config: Sections, ctx: z.RefinementCtx): void {
  if (config.hooks.token === undefined || config.hooks.token !== config.gateway.auth.token) return;
  ctx.addIssue({
    code: "custom",
    path: ["hooks", "token"],
    message: "must differ from gateway.auth.token (a hook token only runs hooks)",
  });
}

/** Bindings and `subagents.allowAgents` name agents of `agents.list` (when there is a list). */
function checkAgentReferences(config: Sections, ctx: z.RefinementCtx): void {
  const ids = config.agents.list.map((agent) => agent.id);
  if (ids.length === 0) return;
  const known = `known agents: ${ids.join(", ")}`;
  config.bindings.forEach((binding, index) => {
    if (ids.includes(binding.agentId)) return;
    ctx.addIssue({
      code: "custom",
      path: ["bindings", index, "agentId"],
      message: `unknown agent "${binding.agentId}" (${known}); add it to agents.list`,
    });
  });
  config.agents.list.forEach((agent, index) => {
    agent.subagents?.allowAgents?.forEach((id, j) => {
      if (id === "*" || ids.includes(id.toLowerCase())) return;
      ctx.addIssue({
        code: "custom",
        path: ["agents", "list", index, "subagents", "allowAgents", j],
        message: `unknown agent "${id}" (${known}, or "*" for any)`,
      });
    });
  });
}

/**
 * The whole `switchboard.json5` with `channels.<id>` composed from the channel table: one strict
 * schema, every default next to its field. Without a table, `channels` checks only the fields every
 * channel shares (unit tests of the core); the CLI and the gateway always pass the table.
 */
export function configSchemaFor(table?: readonly ChannelConfigDefinition[]) {
  return sectionsSchema(table).superRefine((config, ctx) => {
    checkModels(config, ctx);
    checkHookToken(config, ctx);
    checkAgentReferences(config, ctx);
  });
}

/** The config schema without a channel table (see {@link configSchemaFor}). */
export const ConfigSchema = configSchemaFor();

/** The resolved configuration, defaults applied. */
export type Config = z.infer<typeof ConfigSchema>;
/** The configuration as written in the file (every field optional). */
export type ConfigInput = z.input<typeof ConfigSchema>;

export * from "./agents.js";
export * from "./bindings.js";
export * from "./session.js";
export * from "./access.js";
export * from "./agent-extras.js";
export * from "./automation.js";
export * from "./state.js";
