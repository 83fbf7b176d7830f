import type http from "node:http";
import type { Duplex } from "node:stream";
import type { WebSocketServer } from "ws";
import type { ConnectionLimits } from "./connection-limits.js";
import { createPendingGate } from "./connection-limits.js";
import { writeRefusal } from "./edge-refusal.js";
import type { EventHub } from "./event-hub.js";
import type { GatewayCore } from "./gateway-core.js";
import { type RequestPolicy, isLoopback, refusalOf } from "./request-guard.js";
import type { TokenGuard } from "./token-guard.js";
import { attachClient } from "./ws-connection.js";

/** What {@link createUpgradeHandler} needs. */
export interface UpgradeDeps {
  core: GatewayCore;
  events: EventHub;
  wss: WebSocketServer;
  policy: RequestPolicy;
  guard: TokenGuard;
  limits: ConnectionLimits;
  /** true once a stop began: new sockets are refused while the turns drain */
  draining: () => boolean;
}

/** Refuses (and answers) an upgrade from a host or origin not allowed, or from a client locked out for failed tokens. */
function refusedAtEdge(deps: UpgradeDeps, req: http.IncomingMessage, socket: Duplex, address: string): boolean {
  const { core, policy, guard } = deps;
  const refusal =
    policy.token === undefined && !isLoopback(req.socket.remoteAddress)
      ? "only loopback clients without a token"
      : refusalOf(req, policy);
  if (refusal) {
    const fields = { origin: req.headers.origin, host: req.headers.host, reason: refusal };
    core.logger.warn(fields, "websocket upgrade refused");
    writeRefusal(socket, "FORBIDDEN", refusal);
    return true;
  }
  const wait = guard.retryAfterSeconds(address);
  if (wait > 0) {
    const retry = { "retry-after": String(wait) };
    writeRefusal(socket, "RATE_LIMITED", `too many failed attempts; retry in ${wait} s`, retry);
    return true;
  }
  return false;
}

/**
 * Accepts a WebSocket upgrade only from an allowed host and origin (loopback when there is no
 * token), from a client not locked out for failed tokens, and while the caps on connections that
 * have not authenticated yet (per client and in total) leave room; the rest get a JSON refusal.
 */
export function createUpgradeHandler(deps: UpgradeDeps) {
  const { core, guard } = deps;
  const pending = createPendingGate(deps.limits);
  let clients = 0;
  return (req: http.IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on("error", (err) => core.logger.debug({ err }, "upgrade socket error"));
    if (deps.draining()) return void writeRefusal(socket, "UNAVAILABLE", "the gateway is stopping");
    const address = guard.clientOf(req);
    if (refusedAtEdge(deps, req, socket, address)) return;
    const release = pending.admit(address);
    if (!release) {
      core.logger.debug({ address }, "websocket refused: too many connections waiting to authenticate");
      const message = "too many connections waiting to authenticate; send connect first";
      return void writeRefusal(socket, "UNAVAILABLE", message);
    }
    // A handshake ws rejects never reaches attachClient; the socket's end frees its slot then.
    socket.once("close", release);
    deps.wss.handleUpgrade(req, socket, head, (ws) =>
      attachClient(core, deps.events, ws, {
        client: `client-${++clients}`,
        address,
        guard,
        connectDeadlineMs: deps.limits.connectDeadlineMs,
        onSettled: release,
      }),
    );
  };
}
