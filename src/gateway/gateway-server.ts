import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import { acceptRelayed } from "../cluster/relay-trust.js";
import type { EventHub } from "./event-hub.js";
import type { GatewayCore } from "./gateway-core.js";
import { handleHttp } from "./http-routes.js";
import { joinHostPort } from "./host-port.js";
import { loadWebAssets } from "./web-assets.js";
import type { PeerHandlers } from "./peer-handlers.js";
import { createPeerLimiter, isPeerCall, servePeerCall } from "./peer-route.js";
import { type ConnectionLimits, DEFAULT_CONNECTION_LIMITS } from "./connection-limits.js";
import type { RequestPolicy } from "./request-guard.js";
import { type TokenGuard, createTokenGuard } from "./token-guard.js";
import { createUpgradeHandler } from "./ws-upgrade.js";

export { isLoopback } from "./request-guard.js";

/** The largest WebSocket frame the gateway reads; a bigger one closes that connection (1009). */
export const MAX_FRAME_BYTES = 4 * 1024 * 1024;

/** A listening gateway server. */
export interface GatewayServer {
  url: string;
  port: number;
  /** Closes every WebSocket client and refuses new ones; HTTP goes on (probes answer while the core drains). */
  drain(): Promise<void>;
  close(): Promise<void>;
  /**
   * Stops serving on the server without closing it (a gateway of `cluster.owners: "many"` reopening
   * its core, ./many-cores.ts): its listeners go at once, then its WebSocket clients are closed.
   */
  detach(): Promise<void>;
}

/** Any of the server's listeners (each typed where it is added). */
type Listener = (...args: never[]) => void;

/** The server's listeners as this gateway server adds them, so {@link GatewayServer.detach} removes them all. */
function trackedListeners(server: http.Server) {
  const added: Array<[string, Listener]> = [];
  return {
    on(event: string, listener: Listener): void {
      server.on(event, listener as (...args: unknown[]) => void);
      added.push([event, listener]);
    },
    off(): void {
      for (const [event, listener] of added.splice(0)) server.off(event, listener as (...args: unknown[]) => void);
    },
  };
}

type On = ReturnType<typeof trackedListeners>["on"];

/** What {@link listenGateway} needs besides the core. */
export interface ListenOptions extends Partial<RequestPolicy> {
  host: string;
  port: number;
  /** `gateway.trustedProxies`: peers whose X-Forwarded-For names the client; default none */
  trustedProxies?: readonly string[];
  /** default {@link DEFAULT_CONNECTION_LIMITS} */
  limits?: Partial<ConnectionLimits>;
  /** a server already listening (a standby's that now owns its schema, ./standby-server.ts); default a new one on host:port */
  server?: http.Server;
  /** the schema's relay secret (PostgreSQL): a request carrying it was relayed by a standby, which checked its client */
  relaySecret?: string;
  /** `cluster.owners: "many"`: serve `POST /cluster/call` from these handlers (./peer-route.ts); needs `relaySecret` */
  peer?: { handlers: PeerHandlers; nodeId: string };
}

function requestPolicy(options: ListenOptions): RequestPolicy {
  return {
    token: options.token,
    allowedOrigins: options.allowedOrigins ?? [],
    allowedHosts: options.allowedHosts ?? [],
  };
}

/** Answers a request whose handler failed: 500 with the one error line, or a cut socket once headers went out. */
function answerFailure(core: GatewayCore, req: http.IncomingMessage, res: http.ServerResponse, err: unknown): void {
  core.logger.error({ method: req.method, url: req.url, err }, "http request failed");
  if (res.headersSent) return void res.destroy();
  res.writeHead(500, { "content-type": "application/json; charset=utf-8" });
  res.end(
    JSON.stringify({
      ok: false,
      error: { code: "INTERNAL", message: "the gateway failed on this request; see its log" },
    }),
  );
}

/** Serves HTTP requests; a request or response stream that fails is logged, never thrown. */
function serveHttp(
  on: On,
  core: GatewayCore,
  options: ListenOptions,
  access: { policy: RequestPolicy; guard: TokenGuard },
): void {
  const { policy, guard } = access;
  const { logger } = core;
  const assets = loadWebAssets();
  const { relaySecret } = options;
  const peer = options.peer &&
    relaySecret !== undefined && {
      handlers: options.peer.handlers,
      nodeId: () => options.peer!.nodeId,
      relaySecret: async () => relaySecret,
      limiter: createPeerLimiter(),
    };
  on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    acceptRelayed(req, options.relaySecret);
    req.on("error", (err) => logger.warn({ url: req.url, err }, "http request stream failed"));
    res.on("error", (err) => logger.warn({ url: req.url, err }, "http response stream failed"));
    const served =
      peer && isPeerCall(req)
        ? servePeerCall(req, res, { ...peer, guard, logger })
        : handleHttp(core, req, res, { ...policy, guard }, assets);
    served.catch((err: unknown) => answerFailure(core, req, res, err));
  });
  // Malformed HTTP (bad headers, a reset mid-request): answer 400 when the socket still can.
  on("clientError", (err: Error, socket: Duplex) => {
    logger.debug({ err }, "http client error");
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
    else socket.destroy();
  });
}

/** Caps the server's connections; over the cap Node closes a new socket at once, and one warning a minute says why. */
function limitConnections(server: http.Server, on: On, core: GatewayCore, limits: ConnectionLimits): void {
  if (limits.maxConnections !== undefined) server.maxConnections = limits.maxConnections;
  let lastDropWarning = Number.NEGATIVE_INFINITY;
  on("drop", () => {
    if (core.now() - lastDropWarning < 60_000) return;
    lastDropWarning = core.now();
    core.logger.warn(
      { maxConnections: limits.maxConnections },
      "connection refused: descriptor reserve for storage reached",
    );
  });
}

async function listen(server: http.Server, core: GatewayCore, options: ListenOptions): Promise<void> {
  // A server given (openHttpServer's, the standby's) logs its errors already.
  if (options.server) return;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  server.on("error", (err) => core.logger.error({ err }, "http server error"));
}

/** Closes every WebSocket client and the WebSocket server. */
async function closeSockets(wss: WebSocketServer): Promise<void> {
  for (const ws of wss.clients) ws.close(1001, "gateway stopping");
  const closed = new Promise<void>((resolve) => wss.close(() => resolve()));
  // A client that never answers the close handshake (a sleeping laptop) is cut off after 1 s.
  const cutOff = setTimeout(() => {
    for (const ws of wss.clients) ws.terminate();
  }, 1_000);
  await closed;
  clearTimeout(cutOff);
}

/**
 * Serves the WebSocket protocol and HTTP (`/healthz`, `POST /tools/invoke`, the web chat) on one
 * port. Without a token only loopback clients are accepted; browsers only from the gateway's own
 * page or an allowed origin. Every socket has an error path: a bad client never stops the server.
 */
export async function listenGateway(
  core: GatewayCore,
  events: EventHub,
  options: ListenOptions,
): Promise<GatewayServer> {
  const policy = requestPolicy(options);
  const limits: ConnectionLimits = { ...DEFAULT_CONNECTION_LIMITS, ...options.limits };
  const guard = createTokenGuard({ token: options.token, trustedProxies: options.trustedProxies ?? [], now: core.now });
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  wss.on("error", (err) => core.logger.error({ err }, "websocket server error"));
  let draining = false;
  const server = options.server ?? http.createServer();
  const listeners = trackedListeners(server);
  serveHttp(listeners.on, core, options, { policy, guard });
  const upgrade = createUpgradeHandler({ core, events, wss, policy, guard, limits, draining: () => draining });
  listeners.on("upgrade", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    acceptRelayed(req, options.relaySecret);
    upgrade(req, socket, head);
  });
  limitConnections(server, listeners.on, core, limits);
  await listen(server, core, options);
  const { port } = server.address() as AddressInfo;
  async function drain(): Promise<void> {
    if (draining) return;
    draining = true;
    await closeSockets(wss);
  }
  return {
    url: `ws://${joinHostPort(options.host, port)}`,
    port,
    drain,
    async close() {
      await drain();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    async detach() {
      listeners.off();
      await drain();
    },
  };
}
