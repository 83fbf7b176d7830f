// Stand-ins for a standby's owner and the relay in front of them (src/gateway/owner-relay.ts), for
// the relay's unit tests: an owner that answers what it received, one that accepts TCP and never
// answers (a SIGSTOPped process), and the relay with a context whose owner the test moves.
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type WebSocket from "ws";
import { createOwnerRelay } from "../../src/gateway/owner-relay.js";
import type { OwnerAddress, RelayTiming, StandbyContext, StandbyFront } from "../../src/gateway/standby-front.js";
import { createTokenGuard } from "../../src/gateway/token-guard.js";
import { createMemoryLogger } from "../../src/logger.js";

export const RELAY_SECRET = "relay-secret-0123456789";

/** What a test closes after it (run them in reverse from an afterEach). */
export const cleanups: Array<() => Promise<unknown>> = [];

/** Listens on a free loopback port; closed after the test. */
export async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return (server.address() as AddressInfo).port;
}

/** A stand-in owner: answers each HTTP request with what it received, and keeps its WebSocket clients. */
export async function fakeOwner(nodeId = "gw-owner") {
  const seen: Array<{ method?: string; url?: string; headers: http.IncomingHttpHeaders; bytes: number }> = [];
  const server = http.createServer((req, res) => {
    let bytes = 0;
    req.on("data", (chunk: Buffer) => (bytes += chunk.length));
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, bytes });
      res.writeHead(201, { "content-type": "application/json", "x-owner": "yes", connection: "close" });
      res.end(JSON.stringify({ bytes }));
    });
  });
  const wss = new WebSocketServer({ server });
  const sockets: WebSocket[] = [];
  wss.on("connection", (ws, req) => {
    sockets.push(ws);
    seen.push({ method: "UPGRADE", url: req.url, headers: req.headers, bytes: 0 });
    ws.on("message", (data, isBinary) => ws.send(data, { binary: isBinary }));
  });
  cleanups.push(async () => {
    for (const ws of wss.clients) ws.terminate();
  });
  const port = await listen(server);
  return { seen, sockets, owner: { nodeId, address: `127.0.0.1:${port}` } };
}

/** A paused owner: the kernel accepts its connections, nothing ever answers; `sockets` are the connections it holds. */
export async function silentOwner(nodeId = "gw-paused") {
  const sockets: net.Socket[] = [];
  const server = net.createServer((socket) => {
    sockets.push(socket);
    socket.on("error", () => undefined);
    socket.resume(); // read (and drop) what comes, so the test sees the relay end a connection
  });
  const port = await listen(server);
  // Before the server's close, which waits for them.
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
  });
  return { sockets, owner: { nodeId, address: `127.0.0.1:${port}` } };
}

/**
 * The relay as a standby serves it. `where()` is the schema's owner as the database says now; the
 * relay's context keeps the last one read, as the standby's book does, so a new owner reaches the
 * relay only through a re-read (`refreshOwner`, counted in `refreshes`). `upgrades`: the sockets of
 * the upgrades it took.
 */
export async function relayTo(where: () => OwnerAddress | undefined, timing?: RelayTiming) {
  let refreshed = 0;
  let known = where();
  const logger = createMemoryLogger();
  const context: StandbyContext = {
    owner: () => known,
    refreshOwner: async () => {
      refreshed++;
      known = where();
      return known;
    },
    relaySecret: async () => RELAY_SECRET,
    timing: timing ?? { leaseTtlMs: 60_000, heartbeatMs: 20_000 },
    edge: {
      policy: { token: "t0ken-0123456789", allowedOrigins: [], allowedHosts: [] },
      guard: createTokenGuard({ token: "t0ken-0123456789", trustedProxies: ["127.0.0.1"], now: Date.now }),
    },
    logger,
  };
  const relay: StandbyFront = createOwnerRelay(context);
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    void relay.handleHttp(req, res);
  });
  const upgrades: Duplex[] = [];
  server.on("upgrade", (req, socket, head) => {
    upgrades.push(socket);
    relay.handleUpgrade(req, socket, head);
  });
  const port = await listen(server);
  cleanups.push(() => relay.close());
  return { port, relay, logger, upgrades, refreshes: () => refreshed, requests: () => requests };
}
