// A standby's front (./standby-front.ts) that serves everything through the schema's owner: HTTP
// requests and WebSocket connections are forwarded to it with the relay secret and the client's
// address (docs/scale-out.md "Relay"). The owner applies its own limits to what it is sent.
import http from "node:http";
import { pipeline } from "node:stream";
import { WebSocketServer } from "ws";
import { RELAY_SECRET_HEADER } from "../cluster/relay-secret.js";
import { sendRefusal, writeRefusal } from "./edge-refusal.js";
import { MAX_FRAME_BYTES } from "./gateway-server.js";
import { splitHostPort } from "./host-port.js";
import { type RelayForwards, relayForwards } from "./relay-forwards.js";
import { relayRequestHeaders, relayResponseHeaders } from "./relay-headers.js";
import { relayFlow } from "./relay-flow.js";
import { OWNER_GONE, type RelayTarget, type Target, relayUpgrade } from "./relay-socket.js";
import { isPeerCall } from "./peer-route.js";
import { originRefusal, refusalOf } from "./request-guard.js";
import { type StandbyContext, type StandbyFront, createStandbyFront } from "./standby-front.js";

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

/** The answer to a request that already came through a relay: relaying it again could loop (a standby relaying to itself). */
const RELAYED_TWICE = "this request was relayed already; a standby does not relay it again: retry";

const RETRY = { "retry-after": "1" };

/** Whether the owner's answer began, and whether the forward was ended on purpose. */
interface ForwardState {
  answered: boolean;
  ended: boolean;
}

/** The schema's relay secret, read once (again after a failed read). */
export function cachedSecret(context: Pick<StandbyContext, "relaySecret">): () => Promise<string> {
  let secret: Promise<string> | undefined;
  return () => {
    secret ??= context.relaySecret().catch((err: unknown) => {
      secret = undefined; // read again by the next request
      throw err;
    });
    return secret;
  };
}

/** What relaying one HTTP request needs. */
interface HttpRelayDeps {
  context: StandbyContext;
  target: RelayTarget;
  forwards: RelayForwards;
}

/**
 * The {@link StandbyFront} of start-gateway: relays to the schema's owner. HTTP: method, path,
 * query, end-to-end headers and the body streamed both ways. WebSocket: a connection of its own to
 * the owner, frames piped both ways. No owner reachable: 503 UNAVAILABLE with Retry-After: 1, or
 * close 1013. A request that already carries the relay header is refused with 503 (no relay chains).
 */
export function createOwnerRelay(context: StandbyContext): StandbyFront {
  const secretOf = cachedSecret(context);
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  const forwards = relayForwards(context);
  let closed = false;
  const target: RelayTarget = async (req) => {
    const owner = closed ? undefined : (context.owner() ?? (await context.refreshOwner()));
    if (!owner) return undefined;
    const client = context.edge.guard.clientOf(req);
    const headers = relayRequestHeaders(req.headers, { secret: await secretOf(), client });
    // It may have changed: the next request goes to the new one.
    const failed = () => void context.refreshOwner();
    return { owner, ...splitHostPort(owner.address), headers, failed };
  };
  const reads = context.reads && { reads: context.reads, token: context.edge.policy.token, logger: context.logger };
  const upgrade = relayUpgrade({ logger: context.logger, wss, target, flow: relayFlow(context.timing), reads });
  return {
    handleHttp: (req, res) => relayHttp({ context, target, forwards }, req, res),
    handleUpgrade(req, socket, head) {
      if (req.headers[RELAY_SECRET_HEADER] === undefined) return upgrade(req, socket, head);
      writeRefusal(socket, "UNAVAILABLE", RELAYED_TWICE, RETRY);
    },
    // Returns once every close is sent, without waiting for the handshakes: the standby hands its
    // server to the owner's routes right after, and a request arriving meanwhile would find no listener.
    async close() {
      closed = true;
      forwards.abortAll("this gateway stopped relaying (it stops, or now owns the schema); retry");
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
async function relayHttp(deps: HttpRelayDeps, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const { context } = deps;
  const refusal = edgeRefusal(context, req);
  if (refusal) {
    context.logger.warn(
      { origin: req.headers.origin, host: req.headers.host, reason: refusal },
      "http request refused",
    );
    return sendRefusal(res, "FORBIDDEN", refusal);
  }
  if (req.headers[RELAY_SECRET_HEADER] !== undefined) return sendRefusal(res, "UNAVAILABLE", RELAYED_TWICE, RETRY);
  // A peer call is answered by the gateway it names (./peer-front.ts), never relayed with the relay secret.
  if (isPeerCall(req)) return sendRefusal(res, "FORBIDDEN", "peer calls are not relayed: call the gateway named");
  const to = await deps.target(req).catch(() => undefined);
  if (!to) return await unavailable(context, req, res);
  await forward(deps, req, res, to);
}

/** No owner: the standby's own answer (503 naming the owner, Retry-After: 1); an answer begun is cut. */
async function unavailable(context: StandbyContext, req: http.IncomingMessage, res: http.ServerResponse) {
  if (res.headersSent) return void res.destroy();
  await createStandbyFront(context).handleHttp(req, res);
}

/**
 * The rest of a body the owner will not read (it answered early, or the forward failed): read and
 * dropped here, so the client, still sending, reads the answer and its connection serves its next request.
 */
function dropRest(req: http.IncomingMessage, upstream: http.ClientRequest): void {
  if (req.complete) return;
  req.unpipe(upstream);
  req.resume();
}

/** One forward in flight, as `forwards` tracks it: its abort answers 503, or cuts an answer begun. */
function track(
  forwards: RelayForwards,
  {
    req,
    res,
    upstream,
    to,
    state,
  }: {
    req: http.IncomingMessage;
    res: http.ServerResponse;
    upstream: http.ClientRequest;
    to: Target;
    state: ForwardState;
  },
) {
  return forwards.add({
    owner: to.owner,
    answered: () => state.answered,
    abort(reason) {
      state.ended = true;
      upstream.destroy();
      if (state.answered || res.headersSent) return void res.destroy();
      dropRest(req, upstream);
      sendRefusal(res, "UNAVAILABLE", reason, RETRY);
    },
  });
}

/** Streams `req` to the owner and its answer back; tracked in `deps.forwards` until it ends. */
function forward(deps: HttpRelayDeps, req: http.IncomingMessage, res: http.ServerResponse, to: Target) {
  const { context } = deps;
  return new Promise<void>((resolve) => {
    const upstream = http.request({
      host: to.host,
      port: to.port,
      method: req.method,
      path: req.url,
      headers: to.headers,
    });
    // ended: aborted, or the client left: the owner's request then errors, and that is expected
    const state = { answered: false, ended: false };
    const untrack = track(deps.forwards, { req, res, upstream, to, state });
    const done = () => {
      // An answer before the whole body: the rest was dropped here, so the owner's connection, left
      // waiting for it, is closed rather than held until the owner's request timeout.
      if (!upstream.writableFinished) upstream.destroy();
      untrack();
      resolve();
    };
    upstream.on("response", (answer) => {
      state.answered = true;
      // An answer before the whole body (a 413): the client, still sending, is never reset by unread data.
      dropRest(req, upstream);
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, relayResponseHeaders(answer.headers));
      pipeline(answer, res, done);
    });
    // After the answer began, a failure of the request side (the owner stopped reading a body it
    // refused as too large) is the answer's business: its pipeline ends it.
    upstream.on("error", (err) => {
      if (state.answered) return;
      if (!state.ended) {
        context.logger.warn({ owner: to.owner.nodeId, address: to.owner.address, err }, "relay to the owner failed");
        to.failed();
        dropRest(req, upstream);
        void unavailable(context, req, res);
      }
      done();
    });
    // The client gone before the answer ended: the owner's request goes too.
    res.on("close", () => {
      if (res.writableFinished) return;
      state.ended = true;
      upstream.destroy();
    });
    // pipe, not pipeline: the owner refusing the body must not destroy the client's socket before its answer is written.
    req.pipe(upstream);
  });
}
