// A gateway in its own process with the real Discord adapter pointed at a fake Discord that the
// test runs, for tests that SIGKILL it mid-send. Warnings go to stderr as JSON lines. Env:
//   SB_HOME       state directory
//   SB_API_ROOT   the fake Discord's REST root
import { createConfiguredAdapters } from "../../adapters/index.js";
import { createOfflineModel } from "../../src/agents/models/index.js";
import { parseConfig } from "../../src/config/index.js";
import { startGateway } from "../../src/gateway/start-gateway.js";
import { createLogger } from "../../src/logger.js";
import { DISCORD_BOT, WORLD } from "./fake-discord-server.js";
import { answerIdleRequests } from "./answer-idle.js";

const home = process.env.SB_HOME!;
const logger = createLogger("warn");
const { config } = parseConfig({
  channels: {
    discord: {
      token: DISCORD_BOT.token,
      apiRoot: process.env.SB_API_ROOT,
      allowFrom: [WORLD.ada.id],
      owners: [WORLD.ada.id],
    },
  },
});
const adapters = createConfiguredAdapters(config, { home, env: {}, logger });
const model = createOfflineModel();
const gateway = await startGateway({
  config,
  home,
  homeDir: home,
  logger,
  port: 0,
  adapters,
  resolveModel: (ref) => ({ model, ref, offline: true }),
  retry: { minDelayMs: 20, maxDelayMs: 100 },
});
process.stdout.write(`url ${gateway.url}\n`);
answerIdleRequests(gateway.core);
process.once("SIGTERM", () => void gateway.close().then(() => process.exit(0)));
