// A standby's front (./standby-front.ts) that serves everything through the schema's owner: HTTP
// requests and WebSocket connections are forwarded to it with the relay secret and the client's
// address (docs/scale-out.md "Relay"). The owner applies its own limits to what it is sent.
import http from "node:http";
import { pipeline } from "node:stream";
import { WebSocketServer } from "ws";
import { sendRefusal } from "./edge-refusal.js";
import { MAX_FRAME_BYTES } from "./gateway-server.js";
import { relayRequestHeaders, relayResponseHeaders } from "./relay-headers.js";
import { OWNER_GONE, type RelayTarget, relayUpgrade } from "./relay-socket.js";
import { originRefusal, refusalOf } from "./request-guard.js";
import { type StandbyContext, type StandbyFront, createStandbyFront } from "./standby-front.js";

/** "host:port" or "[v6]:port" split; the host without brackets. */
function hostAndPort(address: string): { host: string; port: number } {
  const split = address.lastIndexOf(":");
  return { host: address.slice(0, split).replace(/^\[(.*)\]$/, "$1"), port: Number(address.slice(split + 1)) };
}

/** The gateway's own routes, which the owner guards with its Host and Origin checks; anything else may be a platform webhook. */
function isGatewayRoute(pathname: string): boolean {
  return ["/", "/favicon.ico", "/metrics", "/tools/invoke"].includes(pathname) || pathname.startsWith("/ui/");
}

/**
 * The checks the owner skips for a relayed request, made here as the owner would make them: Host
 * and Origin on the gateway's own routes; Origin only on the rest (hooks check it; platform webhooks
 * authenticate themselves and are sent by servers, which send no Origin).
 */
function edgeRefusal(context: StandbyContext, req: http.IncomingMessage): string | undefined {
  const { policy } = context.edge;
  const { pathname } = new URL(req.url ?? "/", "http://gateway");
  return isGatewayRoute(pathname) ? refusalOf(req, policy) : originRefusal(req, policy.allowedOrigins);
}

/**
 * The {@link StandbyFront} of start-gateway: relays to the schema's owner. HTTP: method, path,
 * query, end-to-end headers and the body streamed both ways. WebSocket: a connection of its own to
 * the owner, frames piped both ways. No owner reachable: 503 UNAVAILABLE with Retry-After: 1, or close 1013.
 */
export function createOwnerRelay(context: StandbyContext): StandbyFront {
  let secret: Promise<string> | undefined;
  const secretOf = () => {
    secret ??= context.relaySecret().catch((err: unknown) => {
      secret = undefined; // read again by the next request
      throw err;
    });
    return secret;
  };
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  let closed = false;
  const target: RelayTarget = async (req) => {
    const owner = closed ? undefined : (context.owner() ?? (await context.refreshOwner()));
    if (!owner) return undefined;
    const client = context.edge.guard.clientOf(req);
    const headers = relayRequestHeaders(req.headers, { secret: await secretOf(), client });
    const failed = () => {
      context.reached(false);
      void context.refreshOwner(); // it may have changed: the next request goes to the new one
    };
    return { owner, ...hostAndPort(owner.address), headers, reached: () => context.reached(true), failed };
  };
  return {
    handleHttp: (req, res) => relayHttp(context, req, res, target),
    handleUpgrade: relayUpgrade({ logger: context.logger, wss, target }),
    // Returns once every close is sent, without waiting for the handshakes: the standby hands its
    // server to the owner's routes right after, and a request arriving meanwhile would find no listener.
    async close() {
      closed = true;
      const clients = [...wss.clients];
      for (const ws of clients) ws.close(OWNER_GONE.code, OWNER_GONE.reason);
      if (clients.length === 0) return;
      // A client that never answers the close handshake is cut off after 1 s.
      setTimeout(() => {
        for (const ws of clients) ws.terminate();
      }, 1_000).unref();
    },
  };
}

/** One HTTP request checked at the edge, then relayed to the owner, its body and the answer streamed. */
async function relayHttp(
  context: StandbyContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  target: RelayTarget,
): Promise<void> {
  const refusal = edgeRefusal(context, req);
  if (refusal) {
    context.logger.warn(
      { origin: req.headers.origin, host: req.headers.host, reason: refusal },
      "http request refused",
    );
    return sendRefusal(res, "FORBIDDEN", refusal);
  }
  // No owner: the standby's own answer (503 naming the owner, Retry-After: 1).
  const unavailable = async () => {
    if (res.headersSent) return void res.destroy();
    await createStandbyFront(context).handleHttp(req, res);
  };
  const to = await target(req).catch(() => undefined);
  if (!to) return await unavailable();
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
      to.reached();
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, relayResponseHeaders(answer.headers));
      pipeline(answer, res, () => resolve());
    });
    // After the answer began, a failure of the request side (the owner stopped reading a body it
    // refused as too large) is the answer's business: its pipeline ends it.
    forward.on("error", (err) => {
      if (answered) return;
      if (!clientGone) {
        context.logger.warn({ owner: to.owner.nodeId, address: to.owner.address, err }, "relay to the owner failed");
        to.failed();
        void unavailable();
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
