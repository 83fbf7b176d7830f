// The first turn after a start is offered the MCP tools of a server still connecting: a real
// gateway with one healthy (slow to spawn) and one failing server, and a turn sent the moment
// /healthz answers, before the gateway's start has connected the servers.
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { connectGateway } from "../../src/cli/gateway-client.js";
import { parseConfig } from "../../src/config/index.js";
import { type RunningGateway, startGateway } from "../../src/gateway/start-gateway.js";
import { createMemoryLogger } from "../../src/logger.js";
import { diceServer } from "../fakes/dice-server-config.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { until } from "../support/gateway-child.js";
import { tempHome } from "../support/test-gateway.js";

const running: Array<Promise<RunningGateway>> = [];
afterEach(async () => {
  for (const gateway of running.splice(0)) await (await gateway).close();
});

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("MCP tools on the first turn", () => {
  it("offers a healthy server's tools to a turn sent as soon as /healthz answers, with a failing server beside it", async () => {
    const home = await tempHome();
    const port = await freePort();
    const model = createScriptedModel([{ text: "ok" }]);
    const { config } = parseConfig({
      // The wait is raised from its default 5 s: a loaded test machine spawns the stdio server slowly.
      mcp: {
        servers: { dice: diceServer(), broken: { command: "/nonexistent/mcp-server" } },
        firstConnectWaitMs: 30_000,
      },
    });
    const starting = startGateway({
      config,
      home,
      homeDir: home,
      logger: createMemoryLogger(),
      port,
      resolveModel: (ref) => ({ model, ref, offline: false }),
    });
    running.push(starting);
    await until(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok === true);
    const client = await connectGateway(`ws://127.0.0.1:${port}`, undefined);
    const sent = (await client.call("chat.send", { sessionKey: "main", message: "roll a die" })) as { runId: string };
    await client.call("agent.wait", { runId: sent.runId, timeoutMs: 30_000 });
    await client.close();
    const offered = (model.calls[0]?.tools ?? []).map((tool) => tool.name);
    expect(offered).toContain("dice__roll");
    expect(offered).toContain("sessions_list");
  }, 60_000);
});
