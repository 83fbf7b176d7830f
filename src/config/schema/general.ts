// The sections of switchboard.json5 that belong to no subsystem of their own: commands, gateway, models, logging.
import { isIP } from "node:net";
import { z } from "zod";

/** `commands.*`: how chat commands are recognised. */
export const CommandsConfigSchema = z.strictObject({
  /** default: true; typed commands such as "/status" are recognised */
  text: z.boolean().default(true),
  /** default: true; register native slash commands where the platform has them */
  native: z.boolean().default(true),
  /** default: true; a bare "stop"/"abort" from an authorized sender aborts the running turn */
  bareAbortWords: z.boolean().default(true),
});

/** `gateway.*`: where the gateway listens and who may talk to it. */
export const GatewayConfigSchema = z.strictObject({
  /** default: "127.0.0.1"; any other address requires `auth.token` */
  bind: z.string().trim().min(1).default("127.0.0.1"),
  /** default: 18789 */
  port: z.number().int().min(0).max(65_535).default(18_789),
  /** default: generated at start, kept for the life of the process; this gateway's name among gateways sharing one PostgreSQL schema */
  nodeId: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/,
      'must be letters, digits, ".", "_" or "-" (at most 63), e.g. "gw-east-1"',
    )
    .optional(),
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
export const ModelsConfigSchema = z.strictObject({
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
export const LoggingConfigSchema = z.strictObject({
  /** default: "info" */
  level: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
});
