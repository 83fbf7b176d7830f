// The dice MCP server of the tests, built with the official SDK: one tool, `roll`, whose result
// names the server's label so a test can tell which server answered. Served over stdio by
// mcp-dice-server.ts, or over streamable HTTP on 127.0.0.1 by startDiceHttpServer.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

/** A dice MCP server; `roll` answers "rolled 4 on a d<sides> (<label>)". */
export function createDiceServer(label: string): McpServer {
  const server = new McpServer({ name: "dice", version: "1.0.0" });
  server.registerTool(
    "roll",
    {
      description: "Roll a die with the given number of sides.",
      inputSchema: { sides: z.number().int().min(2).describe("sides of the die, e.g. 6") },
    },
    async ({ sides }) => ({
      content: [{ type: "text", text: `rolled ${Math.min(4, sides)} on a d${sides} (${label})` }],
    }),
  );
  return server;
}

/** Serves the dice server statelessly over streamable HTTP; requests must carry `authorization: <token>`. */
export async function startDiceHttpServer(token: string): Promise<{ url: string; close(): Promise<void> }> {
  const http = createServer(async (req, res) => {
    if (req.headers.authorization !== token) return void res.writeHead(401).end();
    const server = createDiceServer("over-http");
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
