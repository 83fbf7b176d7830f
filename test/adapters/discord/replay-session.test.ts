// The replay connection alone (adapters/discord/replay-session.ts): it never throws, and whatever
// its server does (refuses every connection, never answers, sends garbage) it gives up within its
// bound, since the account's live messages wait for it.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { type ReplayLimits, replayStoredSession } from "../../../adapters/discord/replay-session.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { DISCORD_BOT } from "../../fakes/fake-discord-server.js";

const servers: Array<http.Server | WebSocketServer> = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** A port on 127.0.0.1 nothing listens on (connections to it are refused). */
async function closedPort(): Promise<number> {
  const server = http.createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Listens on 127.0.0.1 and returns the stored session that points there. */
async function sessionAt(server: http.Server | WebSocketServer) {
  servers.push(server);
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  return { sessionId: "s", resumeUrl: `ws://127.0.0.1:${port}`, seq: 3 };
}

const replay = (session: { sessionId: string; resumeUrl: string; seq: number }, limits?: ReplayLimits) => {
  const logger = createMemoryLogger();
  const started = Date.now();
  return replayStoredSession(session, DISCORD_BOT.token, { logger, accountId: "x" }, limits).then((replayed) => ({
    replayed,
    logger,
    tookMs: Date.now() - started,
  }));
};

describe("the replay connection", () => {
  it("gives a connection refused every time up after 4 tries, within its 10 s bound, with one warning", async () => {
    const session = { sessionId: "s", resumeUrl: `ws://127.0.0.1:${await closedPort()}`, seq: 3 };
    const { replayed, logger, tookMs } = await replay(session);
    expect(replayed).toEqual({ messages: [], end: "dropped" });
    const again = logger.records.filter((r) => r.message === "discord session replay: resuming again");
    expect(again.map((r) => r.fields?.waitMs)).toEqual([250, 500, 1_000]);
    expect(logger.records.filter((r) => r.level === "warn")).toEqual([
      expect.objectContaining({ message: expect.stringContaining("discord session not fully replayed") }),
    ]);
    // The waits (1.75 s) and four refused connections: well inside the bound the account holds live messages for.
    expect(tookMs).toBeLessThan(10_000);
  });

  it("gives up on a server that accepts the connection and never answers once its bound is over", async () => {
    // Accepts TCP and the HTTP upgrade request, and never answers it.
    const silent = http.createServer().listen(0, "127.0.0.1");
    const upgrades: Duplex[] = [];
    silent.on("upgrade", (_req, socket: Duplex) => upgrades.push(socket));
    const session = await sessionAt(silent);
    const { replayed, tookMs } = await replay(session, { timeoutMs: 1_000, retryDelaysMs: [100] });
    expect(replayed).toEqual({ messages: [], end: "timeout" });
    // The bound, and at most the 1 s a close may take.
    expect(tookMs).toBeGreaterThanOrEqual(1_000);
    expect(tookMs).toBeLessThan(2_500);
    for (const socket of upgrades) socket.destroy();
  });

  it("resolves a replay whose resume URL cannot be opened as closed, without throwing", async () => {
    const { replayed, logger } = await replay({ sessionId: "s", resumeUrl: "wss://a b", seq: 1 });
    expect(replayed).toEqual({ messages: [], end: "closed" });
    expect(logger.records).toContainEqual(
      expect.objectContaining({ level: "warn", fields: expect.objectContaining({ resumeUrl: "wss://a b" }) }),
    );
  });

  it("ends a replay whose server sends a frame that is not JSON, without throwing: the account identifies instead", async () => {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    server.on("connection", (ws) => ws.send("{not json"));
    const { replayed } = await replay(await sessionAt(server));
    expect(replayed).toEqual({ messages: [], end: "closed" });
  });
});
