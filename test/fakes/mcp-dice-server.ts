// The dice MCP server over stdio, as a child process. `--exit-after-ms N` makes it exit on its own.
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createDiceServer } from "./dice-mcp.js";

await createDiceServer(process.env.DICE_LABEL ?? "plain").connect(new StdioServerTransport());
const exitAt = process.argv.indexOf("--exit-after-ms");
if (exitAt > 0) setTimeout(() => process.exit(0), Number(process.argv[exitAt + 1]));
