// One smoke test of the real baileys socket: makeWASocket pointed at a loopback WebSocket server that
// accepts and closes every connection, so nothing ever leaves the machine.
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { baileysSocketFactory, createWhatsAppAdapter, defaultAuthDir } from "../../../adapters/whatsapp/index.js";
import { WhatsAppConfigSchema } from "../../../adapters/whatsapp/whatsapp-config.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { linkDevice } from "../../fakes/fake-whatsapp.js";
import { testStartContext } from "../../support/channel-context.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function closingServer(): Promise<{ url: string; connections: string[] }> {
  const connections: string[] = [];
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise((resolve) => server.once("listening", resolve));
  server.on("connection", (socket, request) => {
    connections.push(request.url ?? "");
    socket.terminate();
  });
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  const { port } = server.address() as { port: number };
  return { url: `ws://127.0.0.1:${port}/ws/chat`, connections };
}

describe("baileysSocketFactory", () => {
  it("connects to the configured WebSocket, and a close reaches the reconnect policy, which connects again", async () => {
    const server = await closingServer();
    const home = await mkdtemp(path.join(os.tmpdir(), "sb-wa-real-"));
    await linkDevice(defaultAuthDir(home, "default"));
    const adapter = createWhatsAppAdapter(WhatsAppConfigSchema.parse({}), {
      home,
      logger: createMemoryLogger(),
      socketFactory: baileysSocketFactory({ waWebSocketUrl: server.url, connectTimeoutMs: 1_000 }),
      backoff: { minMs: 50, maxMs: 50, factor: 1, jitter: 0 },
    });
    cleanups.push(() => adapter.stop());
    await adapter.start(async () => undefined, await testStartContext("whatsapp"));
    await expect.poll(() => adapter.accounts()[0]?.lastError, { timeout: 10_000 }).toMatch(/connection closed \(428/);
    await expect.poll(() => server.connections.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    expect(server.connections[0]).toBe("/ws/chat");
    expect(adapter.accounts()[0]).toMatchObject({ linked: true, connected: false });
  });
});
