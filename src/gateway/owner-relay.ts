// A standby's front (./standby-front.ts) that serves everything through the schema's owner: HTTP
// requests and WebSocket connections are forwarded to it with the relay secret and the client's
// address (docs/scale-out.md "Relay"). The owner applies its own limits to what it is sent.
import http from "node:http";
import { pipeline } from "node:stream";
import { WebSocketServer } from "ws";
import type { Db } from "../cluster/lease-sql.js";
import { type RelayOwner, readRelayOwner } from "../cluster/relay-owner.js";
import { readRelaySecret } from "../cluster/relay-secret.js";
import type { Logger } from "../logger.js";
import { sendRefusal } from "./edge-refusal.js";
import { MAX_FRAME_BYTES } from "./gateway-server.js";
import { relayRequestHeaders, relayResponseHeaders } from "./relay-headers.js";
import { OWNER_GONE, type RelayTarget, relayUpgrade } from "./relay-socket.js";
import type { StandbyFront } from "./standby-front.js";

/** What {@link createOwnerRelay} needs. */
export interface OwnerRelayDeps {
  /** the schema's pool: where the owner and the relay secret are read */
  db: Db;
  /** the client address a request counts as (the standby's token guard: `gateway.trustedProxies` applied) */
  clientOf: (req: http.IncomingMessage) => string;
  logger: Logger;
  /** how long a found owner is used before it is read again (a failed relay reads it at once); default 1,000 ms */
  ownerTtlMs?: number;
  /** a monotonic clock in ms; default performance.now */
  now?: () => number;
}

/** "host:port" or "[v6]:port" split; the host without brackets. */
function hostAndPort(address: string): { host: string; port: number } {
  const split = address.lastIndexOf(":");
  return { host: address.slice(0, split).replace(/^\[(.*)\]$/, "$1"), port: Number(address.slice(split + 1)) };
}

/** The owner found last, read again once older than `ttlMs` or after a relay to it failed. */
function ownerBook(deps: OwnerRelayDeps) {
  const now = deps.now ?? (() => performance.now());
  const ttlMs = deps.ownerTtlMs ?? 1_000;
  let known: { owner: RelayOwner | undefined; at: number } | undefined;
  let reading: Promise<RelayOwner | undefined> | undefined;
  const read = async () => {
    try {
      const owner = await readRelayOwner(deps.db);
      known = { owner, at: now() };
      return owner;
    } catch (err) {
      deps.logger.warn({ err }, "could not read the schema's owner; answering 503");
      return undefined;
    } finally {
      reading = undefined;
    }
  };
  return {
    current(): Promise<RelayOwner | undefined> {
      if (known && now() - known.at < ttlMs) return Promise.resolve(known.owner);
      reading ??= read();
      return reading;
    },
    forget(owner: RelayOwner): void {
      if (known?.owner === owner) known = undefined;
    },
  };
}

/**
 * A {@link StandbyFront} relaying to the schema's owner. HTTP: method, path, query, end-to-end
 * headers and the body streamed both ways. WebSocket: a connection of its own to the owner, frames
 * piped both ways. No owner reachable: 503 UNAVAILABLE with Retry-After: 1, or close 1013.
 */
export function createOwnerRelay(deps: OwnerRelayDeps): StandbyFront {
  const owners = ownerBook(deps);
  let secret: Promise<string> | undefined;
  const secretOf = () => {
    secret ??= readRelaySecret(deps.db).catch((err: unknown) => {
      secret = undefined; // read again by the next request
      throw err;
    });
    return secret;
  };
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  let closed = false;
  const target = async (req: http.IncomingMessage) => {
    const owner = closed ? undefined : await owners.current();
    if (!owner) return undefined;
    const headers = relayRequestHeaders(req.headers, { secret: await secretOf(), client: deps.clientOf(req) });
    return { owner, ...hostAndPort(owner.address), headers, forget: () => owners.forget(owner) };
  };
  return {
    handleHttp: (req, res) => relayHttp(deps.logger, req, res, target),
    handleUpgrade: relayUpgrade({ logger: deps.logger, wss, target }),
    async close() {
      closed = true;
      const clients = [...wss.clients];
      for (const ws of clients) ws.close(OWNER_GONE.code, OWNER_GONE.reason);
      // A client that never answers the close handshake is cut off after 1 s.
      const cutOff = setTimeout(() => {
        for (const ws of clients) ws.terminate();
      }, 1_000);
      await Promise.all(clients.map((ws) => new Promise((resolve) => ws.once("close", resolve))));
      clearTimeout(cutOff);
    },
  };
}

/** 503 with Retry-After: 1: the client should try again (a takeover takes about a second). */
function unavailable(res: http.ServerResponse, message: string): void {
  if (res.headersSent) return void res.destroy();
  sendRefusal(res, "UNAVAILABLE", message, { "retry-after": "1" });
}

/** One HTTP request relayed to the owner, its body and the answer streamed. */
async function relayHttp(
  logger: Logger,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  target: RelayTarget,
): Promise<void> {
  const to = await target(req).catch(() => undefined);
  if (!to) return unavailable(res, "no owner of this schema is known; retry in a second");
  const { owner } = to;
  await new Promise<void>((resolve) => {
    const forward = http.request({
      host: to.host,
      port: to.port,
      method: req.method,
      path: req.url,
      headers: to.headers,
    });
    let answered = false;
    let clientGone = false;
    forward.on("response", (answer) => {
      answered = true;
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, relayResponseHeaders(answer.headers));
      pipeline(answer, res, () => resolve());
    });
    // After the answer began, a failure of the request side (the owner stopped reading a body it
    // refused as too large) is the answer's business: its pipeline ends it.
    forward.on("error", (err) => {
      if (answered) return;
      if (!clientGone) {
        logger.warn({ owner: owner.nodeId, address: owner.address, err }, "relay to the owner failed");
        to.forget();
        unavailable(res, `the owner ${owner.nodeId} at ${owner.address} did not answer; retry in a second`);
      }
      resolve();
    });
    // The client gone before the answer ended: the owner's request goes too.
    res.on("close", () => {
      clientGone = !res.writableFinished;
      if (clientGone) forward.destroy();
    });
    // pipe, not pipeline: the owner refusing the body must not destroy the client's socket before its answer is written.
    req.pipe(forward);
  });
}
