// A standby's server (src/gateway/standby-server.ts) with the seam the relay plugs into
// (src/gateway/standby-front.ts): its probes answer themselves, everything else reaches the front,
// an upgrade passes the standby's own edge checks first, and closing hands the socket over.
import type http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/logger.js";
import { type StandbyContext, type StandbyFront, createStandbyFront } from "../../src/gateway/standby-front.js";
import { type StandbyOptions, openHttpServer, serveStandby } from "../../src/gateway/standby-server.js";
import { createTokenGuard } from "../../src/gateway/token-guard.js";
import { rawRequest, rawSocket } from "../support/raw-gateway.js";

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

const OWNER = { nodeId: "gw-owner", address: "127.0.0.1:9" }; // port 9: nothing answers there

/** A standby on a free port whose front `front` makes; the owner it knows is OWNER, and the database says `readOwner`. */
async function standbyWith(front: StandbyOptions["front"], readOwner: StandbyOptions["readOwner"] = async () => OWNER) {
  const logger = createMemoryLogger();
  const server = await openHttpServer("127.0.0.1", 0, { maxConnections: 64, logger });
  servers.push(server);
  const options: StandbyOptions = {
    logger,
    readOwner,
    relaySecret: async () => "s3cret",
    policy: { token: undefined, allowedOrigins: [], allowedHosts: [] },
    guard: createTokenGuard({ token: undefined, trustedProxies: [], now: Date.now }),
    front,
    timing: { leaseTtlMs: 60_000, heartbeatMs: 20_000 },
  };
  const standby = serveStandby(server, options);
  standby.ownerIs(OWNER);
  return { standby, server, logger, port: (server.address() as AddressInfo).port };
}

describe("a standby's server", () => {
  it("answers its probes itself and refuses the rest with 503 naming the owner, Retry-After 1", async () => {
    const { port } = await standbyWith(createStandbyFront);
    expect((await rawRequest(port, { path: "/healthz" })).body).toEqual({
      status: "ok",
      role: "standby",
      owner: OWNER,
    });
    // The owner does not answer: not ready to relay.
    const ready = await rawRequest(port, { path: "/readyz" });
    expect([ready.status, ready.body]).toEqual([
      503,
      {
        ready: false,
        phase: "standby",
        role: "standby",
        owner: OWNER,
        parts: [{ kind: "owner", name: "gw-owner", ok: false, reason: "does not answer at 127.0.0.1:9" }],
      },
    ]);
    const refused = await rawRequest(port, { method: "POST", path: "/hooks/agent", body: "{}" });
    expect([refused.status, refused.headers["retry-after"], refused.body.error]).toEqual([
      503,
      "1",
      { code: "UNAVAILABLE", message: "this gateway is a standby; the owner is gw-owner at 127.0.0.1:9" },
    ]);
    const upgrade = await rawSocket(port).catch((err: { status: number }) => err);
    expect(upgrade).toMatchObject({ status: 503, body: { error: { code: "UNAVAILABLE" } } });
  });

  it("hands requests and upgrades that pass its edge checks to the front, with the context the relay needs; close hands the socket over once", async () => {
    const seen: string[] = [];
    let context: StandbyContext | undefined;
    let closes = 0;
    const front = (given: StandbyContext): StandbyFront => {
      context = given;
      return {
        async handleHttp(req, res) {
          seen.push(`http ${req.url}`);
          res.writeHead(200).end("relayed");
        },
        handleUpgrade(req, socket) {
          seen.push(`upgrade ${req.headers.origin ?? "-"}`);
          socket.destroy();
        },
        async close() {
          closes++;
        },
      };
    };
    const { standby, server, port } = await standbyWith(front);
    expect((await rawRequest(port, { path: "/sessions" })).body).toBe("relayed");
    // A page from another origin is refused by the standby itself: the front never sees it.
    const foreign = await rawSocket(port, { origin: "https://evil.example" }).catch((err: { status: number }) => err);
    expect(foreign).toMatchObject({ status: 403 });
    await rawSocket(port).catch(() => undefined);
    expect(seen).toEqual(["http /sessions", "upgrade -"]);
    expect([context?.owner(), await context?.relaySecret(), await context?.refreshOwner()]).toEqual([
      OWNER,
      "s3cret",
      OWNER,
    ]);
    await Promise.all([standby.close(), standby.close()]);
    expect([closes, server.listenerCount("request"), server.listenerCount("upgrade")]).toEqual([1, 0, 0]);
  });

  it("caps its connections as the owner's server does, and logs a server error (an EMFILE on accept) instead of crashing", async () => {
    const { server, logger, port } = await standbyWith(createStandbyFront);
    expect(server.maxConnections).toBe(64);
    const emfile = Object.assign(new Error("accept EMFILE"), { code: "EMFILE" });
    expect(() => server.emit("error", emfile)).not.toThrow();
    expect(logger.records.filter((r) => r.level === "error").map((r) => [r.message, r.fields])).toEqual([
      ["http server error", { err: emfile }],
    ]);
    expect((await rawRequest(port, { path: "/healthz" })).status).toBe(200);
  });

  it("forgets the owner when the database names none (this gateway holds the lease while its core opens), keeps it when the read fails", async () => {
    let read: () => Promise<typeof OWNER | undefined> = async () => {
      throw new Error("connection refused");
    };
    let context: StandbyContext | undefined;
    const front = (given: StandbyContext) => {
      context = given;
      return createStandbyFront(given);
    };
    const { port } = await standbyWith(front, () => read());
    expect(await context?.refreshOwner()).toEqual(OWNER);
    read = async () => undefined;
    expect(await context?.refreshOwner()).toBeUndefined();
    const refused = await rawRequest(port, { method: "POST", path: "/hooks/agent", body: "{}" });
    expect([refused.status, refused.headers["retry-after"], refused.body.error.message]).toEqual([
      503,
      "1",
      "this gateway is a standby; no owner is known yet",
    ]);
  });
});
