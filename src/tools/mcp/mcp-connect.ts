import { type MCPClient, createMCPClient } from "@ai-sdk/mcp";
import { Experimental_StdioMCPTransport as StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";
import type { McpServerConfig } from "../../config/schema/index.js";

/** A connected MCP server: its client, and a callback the connection calls once when it closes. */
export interface McpConnection {
  client: MCPClient;
  onClosed(listener: () => void): void;
}

/** Connects to one MCP server (stdio child process or streamable HTTP) with the `ai` SDK's MCP client. */
export async function connectMcpServer(
  name: string,
  server: McpServerConfig,
  signal?: AbortSignal,
): Promise<McpConnection> {
  const listeners: Array<() => void> = [];
  const transport =
    "command" in server
      ? new StdioMCPTransport({
          command: server.command,
          args: server.args,
          env: server.env,
          ...(server.cwd && { cwd: server.cwd }),
          stderr: "ignore",
        })
      : ({ type: "http", url: server.url, headers: server.headers } as const);
  const client = await createMCPClient({
    transport,
    clientName: `switchboard:${name}`,
    ...(signal && { initializationOptions: { signal } }),
    onUncaughtError: () => undefined,
  });
  // The client installs its own close handler on the transport; ours runs after it.
  if (!("type" in transport)) {
    const clientClose = transport.onclose;
    transport.onclose = () => {
      clientClose?.();
      for (const listener of listeners.splice(0)) listener();
    };
  }
  return { client, onClosed: (listener) => void listeners.push(listener) };
}
