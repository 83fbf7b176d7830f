// The replay connection alone (adapters/discord/replay-session.ts): it never throws, and whatever
// its server does (refuses every connection, never answers, sends garbage) it gives up within its
// bound, since the account's live messages wait for it.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { replayStoredSession } from "../../../adapters/discord/replay-session.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { DISCORD_BOT } from "../../fakes/fake-discord-server.js";
import { type ManualClock, createManualClock } from "../../fakes/manual-clock.js";
import { until } from "../../support/gateway-child.js";
import { silentGateway } from "./silent-gateway.js";

/** Closes what a test started. */
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
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
async function sessionAt(server: WebSocketServer) {
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  return { sessionId: "s", resumeUrl: `ws://127.0.0.1:${port}`, seq: 3 };
}

/** Starts a replay of `session` (on `clock` when given) and returns its result and log. */
const replay = (session: { sessionId: string; resumeUrl: string; seq: number }, clock?: ManualClock) => {
  const logger = createMemoryLogger();
  const done = replayStoredSession(session, DISCORD_BOT.token, { logger, accountId: "x" }, clock);
  return { done, logger };
};

describe("the replay connection", () => {
  it("gives a connection refused every time up after 4 tries, within its 10 s bound, with one warning", async () => {
    const session = { sessionId: "s", resumeUrl: `ws://127.0.0.1:${await closedPort()}`, seq: 3 };
    const clock = createManualClock();
    const startedAt = clock.now();
    const { done, logger } = replay(session, clock);
    const again = () => logger.records.filter((r) => r.message === "discord session replay: resuming again");
    // Each wait passes on the clock once the replay has logged it (the timer is set in the same turn).
    for (const [tried, waitMs] of [250, 500, 1_000].entries()) {
      await until(() => again().length > tried, 5_000);
      clock.advance(waitMs);
    }
    expect(await done).toEqual({ messages: [], end: "dropped" });
    expect(again().map((r) => r.fields?.waitMs)).toEqual([250, 500, 1_000]);
    expect(logger.records.filter((r) => r.level === "warn")).toEqual([
      expect.objectContaining({ message: expect.stringContaining("discord session not fully replayed") }),
    ]);
    // The waits (1.75 s) were all it took: well inside the bound the account holds live messages for.
    expect(clock.now() - startedAt).toBe(1_750);
  });

  it.each([
    ["never answers the WebSocket upgrade", "upgrade"],
    ["sends HELLO and never answers the RESUME nor the close", "resume"],
  ] as const)(
    "gives up on a server that accepts the connection and %s, once its 10 s bound and the 1 s for its close are over",
    async (_, silence) => {
      const server = await silentGateway(silence);
      closers.push(server.close);
      const clock = createManualClock();
      const { done } = replay({ sessionId: "s", resumeUrl: server.resumeUrl, seq: 3 }, clock);
      await until(server.waiting, 5_000);
      clock.advance(10_000 + 1_000);
      // Settled by the clock alone: with a longer bound or close wait it would not settle in time.
      let replayed: unknown;
      void done.then((value) => (replayed = value));
      await until(() => replayed !== undefined, 5_000);
      expect(replayed).toEqual({ messages: [], end: "timeout" });
    },
  );

  it("resolves a replay whose resume URL cannot be opened as closed, without throwing", async () => {
    const { done, logger } = replay({ sessionId: "s", resumeUrl: "wss://a b", seq: 1 });
    const replayed = await done;
    expect(replayed).toEqual({ messages: [], end: "closed" });
    expect(logger.records).toContainEqual(
      expect.objectContaining({ level: "warn", fields: expect.objectContaining({ resumeUrl: "wss://a b" }) }),
    );
  });

  it("ends a replay whose server sends a frame that is not JSON, without throwing: the account identifies instead", async () => {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    server.on("connection", (ws) => ws.send("{not json"));
    expect(await replay(await sessionAt(server)).done).toEqual({ messages: [], end: "closed" });
  });
});
