import type { ToolSet } from "ai";
import type { McpConfig, McpServerConfig } from "../../config/schema/index.js";
import { statusErrorText } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { type McpConnection, connectMcpServer } from "./mcp-connect.js";

/** How one MCP server is doing, as `/status`, the gateway `status` method and `switchboard doctor` show it. */
export interface McpServerStatus {
  name: string;
  transport: "stdio" | "http";
  state: "connecting" | "connected" | "failed" | "closed";
  /** its tools as agents see them (`<server>__<tool>`) */
  tools: string[];
  /** why the last connection failed or ended */
  error?: string;
  /** ms; when the state last changed */
  since: number;
  /** failed connection attempts since the last success */
  failures: number;
}

/**
 * What `/status` says under the MCP servers: a call that returned is answered from the tool-call
 * record when its turn is replayed, but one the crash cut off runs again, and we cannot ask the server.
 */
export const MCP_AT_LEAST_ONCE =
  "  MCP tool calls are at least once across a crash: a call cut off by it runs again when its turn is replayed (twice, unless the server ignores a repeat).";

/** Dependencies of {@link createMcpManager}. */
export interface McpManagerDeps {
  config: McpConfig;
  logger: Logger;
  now?: () => number;
  /** default: {@link connectMcpServer} */
  connect?: (name: string, server: McpServerConfig) => Promise<McpConnection>;
}

interface ServerSlot {
  server: McpServerConfig;
  status: McpServerStatus;
  connection?: McpConnection;
  tools: ToolSet;
  timer?: NodeJS.Timeout;
}

/** What every server slot of one manager shares; `closed` stops reconnecting. */
interface ManagerContext {
  config: McpConfig;
  logger: Logger;
  now: () => number;
  connect: (name: string, server: McpServerConfig) => Promise<McpConnection>;
  closed: boolean;
}

/** The name an MCP tool has for agents. */
const mcpToolName = (server: string, tool: string) => `${server}__${tool}`;

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

const setStatus = (ctx: ManagerContext, slot: ServerSlot, patch: Partial<McpServerStatus>) =>
  Object.assign(slot.status, patch, { since: ctx.now() });

function newSlot(ctx: ManagerContext, name: string, server: McpServerConfig): ServerSlot {
  const transport = "command" in server ? "stdio" : "http";
  return {
    server,
    tools: {},
    status: { name, transport, state: "connecting", tools: [], since: ctx.now(), failures: 0 },
  };
}

function wrapTool(
  logger: Logger,
  names: { server: string; tool: string },
  tool: ToolSet[string],
  onFailure: (err: unknown) => void,
): ToolSet[string] {
  const full = mcpToolName(names.server, names.tool);
  const execute = tool.execute;
  return {
    ...tool,
    ...(execute && {
      // A failing MCP call is a tool result the model can read, never a failed turn.
      execute: async (input: unknown, options: Parameters<NonNullable<typeof execute>>[1]) => {
        try {
          return await execute(input, options);
        } catch (err) {
          logger.warn({ server: names.server, tool: names.tool, err }, "mcp tool failed");
          onFailure(err);
          return { status: "error", error: `${full} failed: ${message(err)}` };
        }
      },
    }),
  } as ToolSet[string];
}

function wrap(logger: Logger, name: string, tools: ToolSet, onFailure: (err: unknown) => void): ToolSet {
  const out: ToolSet = {};
  for (const [toolName, tool] of Object.entries(tools))
    out[mcpToolName(name, toolName)] = wrapTool(logger, { server: name, tool: toolName }, tool, onFailure);
  return out;
}

function retry(ctx: ManagerContext, slot: ServerSlot): void {
  if (ctx.closed) return;
  clearTimeout(slot.timer);
  // Doubles after each failed attempt, up to 16 times the configured delay.
  const delay = ctx.config.reconnectDelayMs * 2 ** Math.min(Math.max(slot.status.failures - 1, 0), 4);
  slot.timer = setTimeout(() => void open(ctx, slot), delay);
  slot.timer.unref();
}

function drop(
  ctx: ManagerContext,
  slot: ServerSlot,
  connection: McpConnection,
  lost: { reason: string; err?: unknown },
): void {
  if (ctx.closed || slot.connection !== connection) return;
  const name = slot.status.name;
  Object.assign(slot, { connection: undefined, tools: {} });
  // Status lines reach chats (`/status`): an exception is logged whole and shown by its error id.
  const error =
    lost.err === undefined
      ? lost.reason
      : statusErrorText(lost.err, ctx.logger, `${lost.reason}; reconnecting`, { server: name });
  if (lost.err === undefined) ctx.logger.warn({ server: name, reason: lost.reason }, "mcp server lost; reconnecting");
  setStatus(ctx, slot, { state: "failed", tools: [], error });
  // Best effort: the old connection may already be gone.
  void connection.client.close().catch(() => undefined);
  retry(ctx, slot);
}

async function open(ctx: ManagerContext, slot: ServerSlot): Promise<void> {
  const name = slot.status.name;
  setStatus(ctx, slot, { state: "connecting" });
  try {
    const connection = await ctx.connect(name, slot.server);
    // A call that throws (not one the server answered with isError) means the connection is in doubt: start over.
    const tools = wrap(ctx.logger, name, await connection.client.tools(), (err) =>
      drop(ctx, slot, connection, { reason: "a tool call failed", err }),
    );
    if (ctx.closed) return void (await connection.client.close().catch(() => undefined));
    Object.assign(slot, { connection, tools });
    setStatus(ctx, slot, { state: "connected", tools: Object.keys(tools), failures: 0, error: undefined });
    ctx.logger.info({ server: name, tools: Object.keys(tools).length }, "mcp server connected");
    connection.onClosed(() => drop(ctx, slot, connection, { reason: "the server closed the connection" }));
  } catch (err) {
    const error = statusErrorText(err, ctx.logger, "could not start", { server: name });
    setStatus(ctx, slot, { state: "failed", tools: [], error, failures: slot.status.failures + 1 });
    retry(ctx, slot);
  }
}

/** Makes a slot for every configured server and connects them all at once. */
async function openAll(ctx: ManagerContext, slots: Map<string, ServerSlot>): Promise<void> {
  const opening = Object.entries(ctx.config.servers).map(([name, server]) => {
    const slot = newSlot(ctx, name, server);
    slots.set(name, slot);
    return open(ctx, slot);
  });
  await Promise.all(opening);
}

async function closeSlot(ctx: ManagerContext, slot: ServerSlot): Promise<void> {
  clearTimeout(slot.timer);
  setStatus(ctx, slot, { state: "closed" });
  // Best effort: a server that is already gone has nothing to close.
  await slot.connection?.client.close().catch(() => undefined);
}

/**
 * Settles once every configured server's first connect has succeeded or failed (or at close); once
 * a wait has ended (settled or timed out) no one waits again.
 */
function createFirstConnects(noServers: boolean) {
  let settle!: () => void;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  let waitOver = noServers;
  return {
    async wait(maxWaitMs: number): Promise<void> {
      if (waitOver) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, maxWaitMs)))]);
      clearTimeout(timer);
      waitOver = true;
    },
    end(): void {
      waitOver = true;
      settle();
    },
  };
}

/**
 * Keeps one connection per configured MCP server: connects at start, reconnects after a failure
 * or an exit (after `reconnectDelayMs`, doubling per failed attempt up to 16 times), and offers the connected servers' tools. A server that
 * fails is reported in {@link McpManager.status}; it never stops the gateway or a turn.
 */
export function createMcpManager(deps: McpManagerDeps) {
  const { config, logger } = deps;
  const ctx: ManagerContext = {
    config,
    logger,
    now: deps.now ?? Date.now,
    connect: deps.connect ?? connectMcpServer,
    closed: false,
  };
  const slots = new Map<string, ServerSlot>();
  const firstConnects = createFirstConnects(Object.keys(config.servers).length === 0);
  return {
    /**
     * Waits, at most `maxWaitMs`, for servers still in their first connect, so a turn that starts
     * with the gateway is offered their tools; once that wait has ended (settled or timed out) no
     * turn waits again: a server that fails or hangs delays at most the first turns, once.
     */
    ready: (maxWaitMs = config.firstConnectWaitMs): Promise<void> => firstConnects.wait(maxWaitMs),
    /** Connects every configured server; resolves when each has connected or failed once (never rejects). */
    async start(): Promise<void> {
      await openAll(ctx, slots);
      firstConnects.end();
    },
    /** The tools of every connected server, named `<server>__<tool>`. */
    tools: (): ToolSet => Object.assign({}, ...[...slots.values()].map((slot) => slot.tools)) as ToolSet,
    /** Every configured server and how it is doing. */
    status: (): McpServerStatus[] =>
      [...slots.values()].map((slot) => ({ ...slot.status, tools: [...slot.status.tools] })),
    /** Closes every connection and stops reconnecting. */
    async close(): Promise<void> {
      ctx.closed = true;
      firstConnects.end();
      for (const slot of slots.values()) await closeSlot(ctx, slot);
    },
  };
}

/** The MCP connections of a gateway. */
export type McpManager = ReturnType<typeof createMcpManager>;
