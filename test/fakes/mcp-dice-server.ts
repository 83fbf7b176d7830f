// A tiny stdio MCP server built with the official SDK: one tool, `roll`, that returns a fixed
// number so tests can see its result reach the model. `--exit-after-ms N` makes it exit on its own.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "dice", version: "1.0.0" });
server.registerTool(
  "roll",
  { description: "Roll a die with the given number of sides.", inputSchema: { sides: z.number().int().min(2).describe("sides of the die, e.g. 6") } },
  async ({ sides }) => ({ content: [{ type: "text", text: `rolled ${Math.min(4, sides)} on a d${sides} (${process.env.DICE_LABEL ?? "plain"})` }] }),
);
await server.connect(new StdioServerTransport());
const exitAt = process.argv.indexOf("--exit-after-ms");
if (exitAt > 0) setTimeout(() => process.exit(0), Number(process.argv[exitAt + 1]));
