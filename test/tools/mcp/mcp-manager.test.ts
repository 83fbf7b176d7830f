import { afterEach, describe, expect, it } from "vitest";
import { McpConfigSchema } from "../../../src/config/schema/index.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { type McpManager, createMcpManager } from "../../../src/tools/mcp/mcp-manager.js";
import { diceServer } from "../../fakes/dice-server-config.js";
import { startDiceHttpServer } from "../../fakes/dice-mcp.js";

const managers: McpManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.close()));
});

function manager(servers: Record<string, unknown>, reconnectDelayMs = 100, logger = createMemoryLogger()) {
  const m = createMcpManager({
    config: McpConfigSchema.parse({ servers, reconnectDelayMs }),
    logger,
  });
  managers.push(m);
  return m;
}

const call = (m: McpManager, name: string, input: unknown) =>
  m.tools()[name]!.execute!(input, { toolCallId: "t1", messages: [] }) as Promise<unknown>;

describe("createMcpManager", () => {
  it("lets a turn that starts with the gateway wait for a server still in its first connect, and get its tools", async () => {
    const m = manager({ dice: diceServer() });
    const starting = m.start();
    expect(Object.keys(m.tools())).toEqual([]); // still connecting
    await m.ready(30_000); // a loaded machine spawns the stdio server slowly
    expect(Object.keys(m.tools())).toEqual(["dice__roll"]);
    await starting;
  }, 30_000);

  it("waits for a hanging first connect only once, bounded: later turns never wait for it", async () => {
    const m = createMcpManager({
      config: McpConfigSchema.parse({ servers: { hang: { url: "http://127.0.0.1:9/mcp" } } }),
      logger: createMemoryLogger(),
      connect: () => new Promise(() => undefined), // never answers
    });
    managers.push(m);
    void m.start();
    await m.ready(50);
    const next = await Promise.race([
      m.ready(60_000).then(() => "no wait"),
      new Promise((resolve) => setImmediate(() => resolve("waited"))),
    ]);
    expect(next).toBe("no wait");
    expect(m.status()[0]).toMatchObject({ state: "connecting" });
  });

  it("offers a stdio server's tools as <server>__<tool> and calls them with the configured env", async () => {
    const m = manager({ dice: diceServer() });
    await m.start();
    expect(m.status()).toEqual([
      expect.objectContaining({
        name: "dice",
        transport: "stdio",
        state: "connected",
        tools: ["dice__roll"],
        failures: 0,
      }),
    ]);
    expect(await call(m, "dice__roll", { sides: 6 })).toMatchObject({
      content: [{ type: "text", text: "rolled 4 on a d6 (from-config)" }],
    });
  }, 30_000);

  it("reports a server that cannot start, keeps retrying, and never throws", async () => {
    const logger = createMemoryLogger();
    const m = manager({ broken: { command: "/nonexistent/mcp-server" }, dice: diceServer() }, 100, logger);
    await m.start();
    const [broken, dice] = m.status();
    expect(broken).toMatchObject({
      name: "broken",
      state: "failed",
      tools: [],
      error: expect.stringMatching(/^could not start \(error id [0-9a-f]{8}; the gateway log has the details\)$/),
    });
    // The raw failure is in the log line with the same error id, not in the status a chat shows.
    const errorId = /error id ([0-9a-f]{8})/.exec(broken!.error!)![1];
    expect(logger.records).toContainEqual(
      expect.objectContaining({
        fields: expect.objectContaining({
          server: "broken",
          errorId,
          err: expect.objectContaining({ code: "ENOENT" }),
        }),
      }),
    );
    const failures = broken!.failures;
    expect(dice).toMatchObject({ state: "connected" });
    await expect.poll(() => m.status()[0]!.failures, { timeout: 5_000 }).toBeGreaterThan(failures);
    expect(Object.keys(m.tools())).toEqual(["dice__roll"]);
  }, 30_000);

  it("drops the tools of a server that exits, reports it, and reconnects", async () => {
    const m = manager({ dice: diceServer("--exit-after-ms", "1500") }, 200);
    await m.start();
    expect(Object.keys(m.tools())).toEqual(["dice__roll"]);
    await expect.poll(() => m.status()[0]!.state, { timeout: 10_000, interval: 20 }).not.toBe("connected");
    expect(m.status()[0]!.error).toBeDefined();
    await expect.poll(() => m.status()[0]!.state, { timeout: 15_000 }).toBe("connected");
    expect(await call(m, "dice__roll", { sides: 20 })).toMatchObject({
      content: [{ type: "text", text: "rolled 4 on a d20 (from-config)" }],
    });
  }, 40_000);

  it("connects to a streamable HTTP server with the configured headers, and starts over when a call cannot reach it", async () => {
    const http = await startDiceHttpServer("Bearer sesame");
    const m = manager({ remote: { url: http.url, headers: { authorization: "Bearer sesame" } } }, 60_000);
    await m.start();
    expect(m.status()).toEqual([
      expect.objectContaining({ name: "remote", transport: "http", state: "connected", tools: ["remote__roll"] }),
    ]);
    const roll = m.tools().remote__roll!;
    expect(await roll.execute!({ sides: 8 }, { toolCallId: "t1", messages: [] })).toMatchObject({
      content: [{ type: "text", text: "rolled 4 on a d8 (over-http)" }],
    });
    await http.close();
    expect(await roll.execute!({ sides: 8 }, { toolCallId: "t2", messages: [] })).toMatchObject({
      status: "error",
      error: expect.stringContaining("remote__roll failed"),
    });
    expect(m.status()).toEqual([
      expect.objectContaining({
        state: "failed",
        tools: [],
        error: expect.stringMatching(/^a tool call failed; reconnecting \(error id [0-9a-f]{8}/),
      }),
    ]);
    expect(m.tools()).toEqual({});
  }, 30_000);

  it("reports an HTTP server that refuses the headers", async () => {
    const http = await startDiceHttpServer("Bearer sesame");
    try {
      const m = manager({ remote: { url: http.url, headers: { authorization: "Bearer wrong" } } }, 60_000);
      await m.start();
      expect(m.status()).toEqual([
        expect.objectContaining({ state: "failed", tools: [], failures: 1, error: expect.any(String) }),
      ]);
    } finally {
      await http.close();
    }
  }, 30_000);

  it("turns a failing call into an error result instead of throwing", async () => {
    const m = manager({ dice: diceServer() });
    await m.start();
    expect(await call(m, "dice__roll", { sides: "many" })).toMatchObject({ isError: true });
  }, 30_000);
});
