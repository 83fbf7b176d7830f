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
  status: McpServerStatus;
  connection?: McpConnection;
  tools: ToolSet;
  timer?: NodeJS.Timeout;
}

/** The name an MCP tool has for agents. */
const mcpToolName = (server: string, tool: string) => `${server}__${tool}`;

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Keeps one connection per configured MCP server: connects at start, reconnects after a failure
 * or an exit (after `reconnectDelayMs`, doubling per failed attempt up to 16 times), and offers the connected servers' tools. A server that
 * fails is reported in {@link McpManager.status}; it never stops the gateway or a turn.
 */
export function createMcpManager(deps: McpManagerDeps) {
  const now = deps.now ?? Date.now;
  const connect = deps.connect ?? connectMcpServer;
  const slots = new Map<string, ServerSlot>();
  let closed = false;

  const set = (slot: ServerSlot, patch: Partial<McpServerStatus>) =>
    Object.assign(slot.status, patch, { since: now() });

  function wrap(name: string, tools: ToolSet, onFailure: (err: unknown) => void): ToolSet {
    const out: ToolSet = {};
    for (const [toolName, tool] of Object.entries(tools)) {
      const full = mcpToolName(name, toolName);
      const execute = tool.execute;
      out[full] = {
        ...tool,
        ...(execute && {
          // A failing MCP call is a tool result the model can read, never a failed turn.
          execute: async (input: unknown, options: Parameters<NonNullable<typeof execute>>[1]) => {
            try {
              return await execute(input, options);
            } catch (err) {
              deps.logger.warn({ server: name, tool: toolName, err }, "mcp tool failed");
              onFailure(err);
              return { status: "error", error: `${full} failed: ${message(err)}` };
            }
          },
        }),
      } as ToolSet[string];
    }
    return out;
  }

  function retry(name: string, slot: ServerSlot, server: McpServerConfig): void {
    if (closed) return;
    clearTimeout(slot.timer);
    // Doubles after each failed attempt, up to 16 times the configured delay.
    const delay = deps.config.reconnectDelayMs * 2 ** Math.min(Math.max(slot.status.failures - 1, 0), 4);
    slot.timer = setTimeout(() => void open(name, slot, server), delay);
    slot.timer.unref();
  }

  function drop(
    name: string,
    slot: ServerSlot,
    server: McpServerConfig,
    connection: McpConnection,
    lost: { reason: string; err?: unknown },
  ): void {
    if (closed || slot.connection !== connection) return;
    Object.assign(slot, { connection: undefined, tools: {} });
    // Status lines reach chats (`/status`): an exception is logged whole and shown by its error id.
    const error =
      lost.err === undefined
        ? lost.reason
        : statusErrorText(lost.err, deps.logger, `${lost.reason}; reconnecting`, { server: name });
    if (lost.err === undefined)
      deps.logger.warn({ server: name, reason: lost.reason }, "mcp server lost; reconnecting");
    set(slot, { state: "failed", tools: [], error });
    // Best effort: the old connection may already be gone.
    void connection.client.close().catch(() => undefined);
    retry(name, slot, server);
  }

  async function open(name: string, slot: ServerSlot, server: McpServerConfig): Promise<void> {
    set(slot, { state: "connecting" });
    try {
      const connection = await connect(name, server);
      // A call that throws (not one the server answered with isError) means the connection is in doubt: start over.
      const tools = wrap(name, await connection.client.tools(), (err) =>
        drop(name, slot, server, connection, { reason: "a tool call failed", err }),
      );
      if (closed) return void (await connection.client.close().catch(() => undefined));
      Object.assign(slot, { connection, tools });
      set(slot, { state: "connected", tools: Object.keys(tools), failures: 0, error: undefined });
      deps.logger.info({ server: name, tools: Object.keys(tools).length }, "mcp server connected");
      connection.onClosed(() => drop(name, slot, server, connection, { reason: "the server closed the connection" }));
    } catch (err) {
      const error = statusErrorText(err, deps.logger, "could not start", { server: name });
      set(slot, { state: "failed", tools: [], error, failures: slot.status.failures + 1 });
      retry(name, slot, server);
    }
  }

  // Settles once every configured server's first connect has succeeded or failed (or at close).
  let firstConnectsDone!: () => void;
  const firstConnects = new Promise<void>((resolve) => (firstConnectsDone = resolve));
  let waitOver = Object.keys(deps.config.servers).length === 0;

  return {
    /**
     * Waits, at most `maxWaitMs`, for servers still in their first connect, so a turn that starts
     * with the gateway is offered their tools; once that wait has ended (settled or timed out) no
     * turn waits again: a server that fails or hangs delays at most the first turns, once.
     */
    async ready(maxWaitMs = deps.config.firstConnectWaitMs): Promise<void> {
      if (waitOver) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([firstConnects, new Promise((resolve) => (timer = setTimeout(resolve, maxWaitMs)))]);
      clearTimeout(timer);
      waitOver = true;
    },

    /** Connects every configured server; resolves when each has connected or failed once (never rejects). */
    async start(): Promise<void> {
      const opening: Promise<void>[] = [];
      for (const [name, server] of Object.entries(deps.config.servers)) {
        const slot: ServerSlot = {
          tools: {},
          status: {
            name,
            transport: "command" in server ? "stdio" : "http",
            state: "connecting",
            tools: [],
            since: now(),
            failures: 0,
          },
        };
        slots.set(name, slot);
        opening.push(open(name, slot, server));
      }
      await Promise.all(opening);
      waitOver = true;
      firstConnectsDone();
    },
    /** The tools of every connected server, named `<server>__<tool>`. */
    tools(): ToolSet {
      return Object.assign({}, ...[...slots.values()].map((slot) => slot.tools)) as ToolSet;
    },
    /** Every configured server and how it is doing. */
    status(): McpServerStatus[] {
      return [...slots.values()].map((slot) => ({ ...slot.status, tools: [...slot.status.tools] }));
    },
    /** Closes every connection and stops reconnecting. */
    async close(): Promise<void> {
      closed = true;
      waitOver = true;
      firstConnectsDone();
      for (const slot of slots.values()) {
        clearTimeout(slot.timer);
        set(slot, { state: "closed" });
        // Best effort: a server that is already gone has nothing to close.
        await slot.connection?.client.close().catch(() => undefined);
      }
    },
  };
}

/** The MCP connections of a gateway. */
export type McpManager = ReturnType<typeof createMcpManager>;
