// A gateway in its own process whose start waits on an MCP server the test holds, for tests of
// readiness while starting. Env:
//   SB_HOME      state directory
//   SB_PORT      the port to listen on (known before the start finishes)
//   SB_MCP_URL   a streamable-HTTP MCP server; the start waits until it connects or fails
import { createOfflineModel } from "../../src/agents/models/index.js";
import { parseConfig } from "../../src/config/index.js";
import { startGateway } from "../../src/gateway/start-gateway.js";
import { createLogger } from "../../src/logger.js";

const home = process.env.SB_HOME!;
const { config } = parseConfig({
  mcp: { servers: { slow: { url: process.env.SB_MCP_URL! } }, reconnectDelayMs: 60_000 },
});
const model = createOfflineModel();
const gateway = await startGateway({
  config,
  home,
  homeDir: home,
  logger: createLogger("warn"),
  port: Number(process.env.SB_PORT),
  resolveModel: (ref) => ({ model, ref, offline: true }),
});
process.stdout.write(`url ${gateway.url}\n`);
process.once("SIGTERM", () => void gateway.close().then(() => process.exit(0)));
