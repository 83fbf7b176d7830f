import { z } from "zod";

/** A tool policy: names (`read`) or every tool of an MCP server (`github__*`). */
export const ToolPolicySchema = z.strictObject({
  /** default: unset (every tool); when set, only these tools */
  allow: z.array(z.string().trim().min(1)).optional(),
  /** default: []; tools taken away (wins over allow) */
  deny: z.array(z.string().trim().min(1)).default([]),
});
export type ToolPolicy = z.infer<typeof ToolPolicySchema>;

/** `agents.defaults.compaction`: automatic compaction before a turn when the context nears the window. */
export const CompactionConfigSchema = z.strictObject({
  /** default: true; compact automatically (`/compact` always works) */
  enabled: z.boolean().default(true),
  /** default: 0.8; compact when the context passes this fraction of the model's window */
  threshold: z.number().gt(0).max(1).default(0.8),
  /** default: 4000; tokens kept free for the reply: compact also when the context passes window - reserveTokens */
  reserveTokens: z.number().int().min(0).default(4000),
  memoryFlush: z
    .strictObject({
      /** default: true; one silent turn before an automatic compaction asks the model to write durable notes (never for the offline model) */
      enabled: z.boolean().default(true),
    })
    .prefault({}),
});

/** `agents.defaults.workspace`: how workspace files reach the prompt and the file tools. */
export const WorkspaceDefaultsSchema = z.strictObject({
  /** default: 4000; characters of each workspace file the system prompt carries (the rest is cut, marked) */
  promptFileMaxChars: z.number().int().min(100).default(4000),
  /** default: 262144 (256 KiB); largest file read, write and edit handle */
  maxFileBytes: z.number().int().min(1024).default(262_144),
});

/** One MCP server: a stdio command, or a streamable HTTP URL. */
const McpServerSchema = z.union([
  z.strictObject({
    command: z.string().trim().min(1),
    /** default: [] */
    args: z.array(z.string()).default([]),
    /** default: {}; added to a minimal environment (PATH, HOME) */
    env: z.record(z.string(), z.string()).default({}),
    /** default: the gateway's working directory */
    cwd: z.string().optional(),
  }),
  z.strictObject({
    url: z.url(),
    /** default: {}; e.g. { Authorization: "Bearer ..." } (secret) */
    headers: z.record(z.string(), z.string()).default({}),
  }),
]);
export type McpServerConfig = z.infer<typeof McpServerSchema>;

/** `mcp.*`: MCP servers whose tools agents may use as `<server>__<tool>`. */
export const McpConfigSchema = z.strictObject({
  /** default: {}; server names are letters, digits, '-' and '_' */
  servers: z
    .record(z.string().regex(/^[A-Za-z0-9_-]+$/, "must be letters, digits, '-' or '_'"), McpServerSchema)
    .default({}),
  /** default: 5000; ms between reconnect attempts to a failed server */
  reconnectDelayMs: z.number().int().min(10).default(5000),
  /** default: 5000; how long the first turns after a start wait for servers still in their first connect */
  firstConnectWaitMs: z.number().int().min(0).default(5000),
});
export type McpConfig = z.infer<typeof McpConfigSchema>;
