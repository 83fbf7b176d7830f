import path from "node:path";

const SERVER = path.resolve(import.meta.dirname, "mcp-dice-server.ts");

/** The stdio dice MCP server (test/fakes/mcp-dice-server.ts) as an `mcp.servers.<name>` entry. */
export const diceServer = (...extra: string[]) => ({
  command: process.execPath,
  args: ["--import", "tsx", SERVER, ...extra],
  env: { DICE_LABEL: "from-config" },
});
