// The relay's requests in flight (src/gateway/owner-relay.ts, src/gateway/relay-forwards.ts,
// src/gateway/relay-socket.ts): no relay chains (a standby whose owner is itself answers 503 after
// one hop instead of looping), an owner that accepts and never answers (SIGSTOPped) neither holds
// the standby's stop nor keeps a request once another gateway holds the lease, and a client leaving
// during the owner's handshake is no failure of the owner.
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../support/gateway-child.js";
import { rawRequest, rawSocket } from "../support/raw-gateway.js";
import { RELAY_SECRET, cleanups, fakeOwner, relayTo, silentOwner } from "../support/stand-in-owner.js";

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const RELAYED_TWICE = "this request was relayed already; a standby does not relay it again: retry";

describe("the relay's requests in flight", () => {
  it("relays a request that already carries x-switchboard-relay nowhere: a standby whose owner is itself answers 503 after one hop", async () => {
    let port = 0;
    const self = await relayTo(() => (port ? { nodeId: "gw-self", address: `127.0.0.1:${port}` } : undefined));
    port = self.port;
    const answer = await rawRequest(port, { method: "POST", path: "/hooks/agent", body: "{}" });
    expect([answer.status, answer.headers["retry-after"], answer.body.error]).toEqual([
      503,
      "1",
      { code: "UNAVAILABLE", message: RELAYED_TWICE },
    ]);
    // The client's request and its one relayed copy: no loop.
    expect(self.requests()).toBe(2);
    const upgrade = await rawSocket(port, { "x-switchboard-relay": RELAY_SECRET }).catch((err: unknown) => err);
    expect(upgrade).toMatchObject({ status: 503, body: { error: { code: "UNAVAILABLE", message: RELAYED_TWICE } } });
  });

  it("ends a relay to an owner that never answers at close(): the client gets 503 and close() does not wait for the owner", async () => {
    const paused = await silentOwner();
    const { port, relay } = await relayTo(() => paused.owner);
    const answer = rawRequest(port, { method: "POST", path: "/tools/invoke", body: "{}" });
    await until(() => paused.sockets.length === 1);
    await relay.close();
    expect((await answer).status).toBe(503);
    expect((await answer).body.error).toEqual({
      code: "UNAVAILABLE",
      message: "this gateway stopped relaying (it stops, or now owns the schema); retry",
    });
  });

  it("re-reads the owner while relaying: a relay unanswered past the lease TTL ends 503 once another gateway holds the lease, and the next request goes to it", async () => {
    const paused = await silentOwner();
    const next = await fakeOwner("gw-next");
    let owner = paused.owner;
    const { port, refreshes } = await relayTo(() => owner, { leaseTtlMs: 300, heartbeatMs: 50 });
    const stuck = rawRequest(port, { method: "POST", path: "/tools/invoke", body: "{}" });
    await until(() => paused.sockets.length === 1);
    // Read every heartbeat while it waits: the owner has not changed, so it waits on.
    await until(() => refreshes() >= 2);
    owner = next.owner; // the paused owner's lease was taken at its TTL
    const ended = await stuck;
    expect([ended.status, ended.headers["retry-after"], ended.body.error]).toEqual([
      503,
      "1",
      { code: "UNAVAILABLE", message: "the schema's owner changed (was gw-paused); retry" },
    ]);
    const retried = await rawRequest(port, { method: "POST", path: "/tools/invoke", body: "{}" });
    expect([retried.status, retried.headers["x-owner"], next.seen.length]).toEqual([201, "yes", 1]);
  });

  it("takes a client leaving during the owner's handshake as no failure of the owner: no warning, the owner not read again", async () => {
    const paused = await silentOwner();
    const { port, logger, refreshes, upgrades } = await relayTo(() => paused.owner);
    const client = net.connect(port, "127.0.0.1");
    client.on("error", () => undefined);
    client.write(
      "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
        "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
    );
    await until(() => paused.sockets.length === 1);
    const upstreamClosed = new Promise((resolve) => paused.sockets[0]!.once("close", resolve));
    // The client's socket ends while the owner has not answered (an upgrade socket is not read, so
    // the standby learns of a client's leaving when its socket closes: closed here on its side).
    upgrades[0]!.destroy();
    await upstreamClosed; // the relay ended its handshake with the owner
    await new Promise((resolve) => setImmediate(resolve));
    expect(logger.records.filter((r) => r.level === "warn")).toEqual([]);
    expect(refreshes()).toBe(0);
  });
});
