// Backpressure and liveness of a relayed WebSocket (src/gateway/relay-flow.ts), against a stand-in
// owner: a client that does not read, an owner that does not read, an owner that answers no ping.
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { RELAY_SECRET, cleanups, fakeOwner, relayTo } from "../support/stand-in-owner.js";

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const FRAME = Buffer.alloc(64 * 1024, 1);
const MiB = 1024 * 1024;
/** What the standby may hold toward one side: the 1 MiB high-water mark and the frames read before its pause took hold. */
const BOUND = 2 * MiB;

/** A client of the relay on `port`, open; `closed` says how it ended, `bytes` what it read. */
async function client(port: number) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once("close", (code, reason) => resolve({ code, reason: String(reason) })),
  );
  const read = { bytes: 0 };
  ws.on("message", (data: Buffer) => (read.bytes += data.length));
  ws.on("error", () => undefined);
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  return { ws, closed, read };
}

/**
 * Sends 64 KiB frames on `ws` (up to 1,024: 64 MiB) until `enough()` holds, letting I/O run every
 * 16 frames; returns how many it sent and the most `watch()` read meanwhile.
 */
async function flood(ws: WebSocket, enough: () => boolean, watch: () => number) {
  let sent = 0;
  let most = 0;
  while (sent < 1024 && !enough() && ws.readyState === WebSocket.OPEN) {
    for (let i = 0; i < 16; i++, sent++) ws.send(FRAME);
    await new Promise((resolve) => setImmediate(resolve));
    most = Math.max(most, watch());
  }
  return { sent, most };
}

/** The owner stops reading; cut off after the test (a paused socket never sees the end, and its server's close would wait). */
function pauseOwner(ws: WebSocket): void {
  ws.pause();
  cleanups.push(async () => ws.terminate());
}

describe("relayed WebSocket flow", () => {
  it("keeps the standby's buffer toward a client that does not read under 2 MiB: the owner's frames wait at the owner, and all arrive once it reads", async () => {
    const owner = await fakeOwner();
    // Pings every 50 ms: while the standby does not read the owner (paused), a pong it cannot read is no death.
    const { port, upgrades } = await relayTo(() => owner.owner, { leaseTtlMs: 60_000, heartbeatMs: 50 });
    const slow = await client(port);
    slow.ws.pause();
    const ownerSide = owner.sockets[0]!;
    const toClient = upgrades[0]!;
    const { sent, most } = await flood(
      ownerSide,
      () => ownerSide.bufferedAmount > 16 * MiB,
      () => toClient.writableLength,
    );
    expect(ownerSide.bufferedAmount).toBeGreaterThan(16 * MiB);
    expect(most).toBeLessThan(BOUND);
    expect(toClient.writableLength).toBeLessThan(BOUND);

    slow.ws.resume();
    await expect.poll(() => slow.read.bytes, { timeout: 20_000, interval: 20 }).toBe(sent * FRAME.length);
    expect(slow.ws.readyState).toBe(WebSocket.OPEN);
  });

  it("closes a client that stays unread past the stall time: the owner's side gets 1008, the standby holds under 2 MiB", async () => {
    const owner = await fakeOwner();
    const { port, upgrades } = await relayTo(() => owner.owner, { leaseTtlMs: 300, heartbeatMs: 20_000 });
    const slow = await client(port);
    slow.ws.pause();
    const ownerSide = owner.sockets[0]!;
    const ownerClosed = new Promise<{ code: number; reason: string }>((resolve) =>
      ownerSide.once("close", (code, reason) => resolve({ code, reason: String(reason) })),
    );
    const { most } = await flood(
      ownerSide,
      () => ownerSide.bufferedAmount > 8 * MiB,
      () => upgrades[0]!.writableLength,
    );
    expect(most).toBeLessThan(BOUND);
    expect(await ownerClosed).toEqual({ code: 1008, reason: "the client reads too slowly; reconnect" });
  });

  it("closes the client 1013 when the owner does not read what it sends; the standby held under 2 MiB toward the owner", async () => {
    const owner = await fakeOwner();
    const { port, logger } = await relayTo(() => owner.owner, { leaseTtlMs: 1_000, heartbeatMs: 200 });
    const sender = await client(port);
    pauseOwner(owner.sockets[0]!);
    // The frames wait at the client: the standby stopped reading it.
    await flood(
      sender.ws,
      () => sender.ws.bufferedAmount > 8 * MiB,
      () => 0,
    );
    expect(await sender.closed).toEqual({ code: 1013, reason: "the schema's owner does not keep up; retry" });
    const stalled = logger.records.find((r) => r.message === "relayed WebSocket closed: the owner does not read");
    expect(stalled?.fields.bufferedAmount).toBeLessThan(BOUND);
  });

  it("closes the client 1012 when the owner answers no ping (a dead connection that sent no FIN)", async () => {
    const owner = await fakeOwner();
    const { port, logger } = await relayTo(() => owner.owner, { leaseTtlMs: 60_000, heartbeatMs: 50 });
    const watched = await client(port);
    // The owner reads nothing more: no pong comes back, as from a host gone without a word.
    pauseOwner(owner.sockets[0]!);
    expect((await watched.closed).code).toBe(1012);
    expect(logger.records.map((r) => r.message)).toContain(
      "relayed WebSocket's owner answered no ping; closing it 1012",
    );
    expect(owner.seen.at(-1)?.headers["x-switchboard-relay"]).toBe(RELAY_SECRET);
  });
});
