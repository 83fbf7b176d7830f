// A gateway on PostgreSQL listens before it owns its schema (docs/scale-out.md): until it takes the
// writer lease it is a standby on the same port, answering its probes itself and handing everything
// else to its front (./standby-front.ts: 503 naming the owner, or the relay to it).
import http from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "../logger.js";
import { writeRefusal } from "./edge-refusal.js";
import { type RequestPolicy, isLoopback, refusalOf } from "./request-guard.js";
import type { StandbyReads } from "./standby-front.js";
import type { OwnerAddress, RelayTiming, StandbyContext, StandbyFront, StandbyFrontFactory } from "./standby-front.js";
import type { TokenGuard } from "./token-guard.js";

/** How long the standby's `/readyz` waits for the owner's `/healthz`. */
const OWNER_PROBE_MS = 1_000;

/** What {@link serveStandby} needs. */
export interface StandbyOptions {
  logger: Logger;
  /** reads the schema's owner from the database */
  readOwner(): Promise<OwnerAddress | undefined>;
  relaySecret(): Promise<string>;
  /** the gateway's Host/Origin policy and token guard: the edge checks a standby applies itself */
  policy: RequestPolicy;
  guard: TokenGuard;
  front: StandbyFrontFactory;
  /** the reads the standby answers itself (./standby-reads.ts); closed with the standby */
  reads?: StandbyReads | undefined;
  /** the cluster's lease timing (`cluster.leaseTtlMs`, `cluster.heartbeatMs`) */
  timing: RelayTiming;
}

/** A server serving as a standby until {@link Standby.close} hands it to the owner's routes. */
export interface Standby {
  /** the owner the cluster found when this gateway could not take the schema */
  ownerIs(owner: OwnerAddress): void;
  /** stops serving as a standby: its listeners go, the front closes its relayed connections (once, however often it is called) */
  close(): Promise<void>;
}

/** What {@link openHttpServer} needs besides where to listen. */
export interface HttpServerOptions {
  /** the connection cap listenGateway sets too (`limits.maxConnections`): a standby has the owner's descriptor budget */
  maxConnections: number | undefined;
  logger: Logger;
}

/**
 * Creates the gateway's HTTP server and listens: the standby serves on it first, then the owner's
 * routes. Capped and with an error listener from the start: an accept failing (EMFILE) while a
 * standby is logged, not thrown (an unheard 'error' would stop the process).
 */
export async function openHttpServer(host: string, port: number, options: HttpServerOptions): Promise<http.Server> {
  const server = http.createServer();
  if (options.maxConnections !== undefined) server.maxConnections = options.maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", (err) => options.logger.error({ err }, "http server error"));
  return server;
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

/**
 * The owner as last known, read again on demand: a read that finds none (or this gateway holding the
 * lease, in the takeover window) forgets it; a read that fails keeps it.
 */
function ownerBook(options: StandbyOptions) {
  let current: OwnerAddress | undefined;
  const refresh = async () => {
    try {
      current = await options.readOwner();
    } catch (err) {
      options.logger.debug({ err }, "the schema's owner could not be read; the last one known is kept");
    }
    return current;
  };
  /** The owner's `/healthz`: `/readyz` of a standby is 200 only when it answers. */
  const probe = async () => {
    const owner = current ?? (await refresh());
    if (!owner) return false;
    let reachable = false;
    try {
      const res = await fetch(`http://${owner.address}/healthz`, { signal: AbortSignal.timeout(OWNER_PROBE_MS) });
      reachable = res.ok;
    } catch {
      reachable = false;
    }
    if (!reachable) await refresh();
    return reachable;
  };
  return {
    owner: () => current,
    set(owner: OwnerAddress) {
      current = owner;
    },
    refresh,
    probe,
  };
}

/** The standby's own edge checks on an upgrade (Host, Origin, loopback without a token, lockout); true when refused. */
function refusedUpgrade(options: StandbyOptions, req: http.IncomingMessage, socket: Duplex): boolean {
  const { policy, guard } = options;
  const refusal =
    policy.token === undefined && !isLoopback(req.socket.remoteAddress)
      ? "only loopback clients without a token"
      : refusalOf(req, policy);
  if (refusal) {
    options.logger.warn({ origin: req.headers.origin, host: req.headers.host, reason: refusal }, "upgrade refused");
    writeRefusal(socket, "FORBIDDEN", refusal);
    return true;
  }
  const wait = guard.retryAfterSeconds(guard.clientOf(req));
  if (wait === 0) return false;
  writeRefusal(socket, "RATE_LIMITED", `too many failed attempts; retry in ${wait} s`, { "retry-after": String(wait) });
  return true;
}

/** A standby's readiness: whether the owner answered (the owner is public already: `/healthz` names it). */
function readyz(res: http.ServerResponse, ready: boolean, book: ReturnType<typeof ownerBook>) {
  const owner = book.owner() ?? null;
  const part = {
    kind: "owner",
    name: owner?.nodeId ?? "-",
    ok: ready,
    reason: owner ? `${ready ? "answers" : "does not answer"} at ${owner.address}` : "no owner known",
  };
  json(res, ready ? 200 : 503, { ready, phase: "standby", role: "standby", owner, parts: [part] });
}

/** The standby's request listener: its probes, then the front. */
function standbyRequests(book: ReturnType<typeof ownerBook>, front: StandbyFront, logger: Logger) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    req.on("error", (err) => logger.warn({ url: req.url, err }, "http request stream failed"));
    res.on("error", (err) => logger.warn({ url: req.url, err }, "http response stream failed"));
    const path = new URL(req.url ?? "/", "http://gateway").pathname;
    const owner = book.owner() ?? null;
    if (req.method === "GET" && path === "/healthz") return json(res, 200, { status: "ok", role: "standby", owner });
    if (req.method === "GET" && path === "/readyz") return void book.probe().then((ready) => readyz(res, ready, book));
    front.handleHttp(req, res).catch((err: unknown) => {
      logger.error({ method: req.method, url: req.url, err }, "standby request failed");
      if (res.headersSent) return void res.destroy();
      json(res, 502, { ok: false, error: { code: "UNAVAILABLE", message: "the standby could not reach the owner" } });
    });
  };
}

/** Serves `server` as a standby: probes itself, everything else through the front `options.front` makes. */
export function serveStandby(server: http.Server, options: StandbyOptions): Standby {
  const { logger } = options;
  const book = ownerBook(options);
  const context: StandbyContext = {
    owner: book.owner,
    refreshOwner: book.refresh,
    relaySecret: options.relaySecret,
    timing: options.timing,
    edge: { policy: options.policy, guard: options.guard },
    ...(options.reads && { reads: options.reads }),
    logger,
  };
  const front = options.front(context);
  const onRequest = standbyRequests(book, front, logger);
  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", (err) => logger.debug({ err }, "upgrade socket error"));
    if (!refusedUpgrade(options, req, socket)) front.handleUpgrade(req, socket, head);
  };
  server.on("request", onRequest);
  server.on("upgrade", onUpgrade);
  let closed: Promise<void> | undefined;
  return {
    ownerIs: book.set,
    close() {
      server.off("request", onRequest);
      server.off("upgrade", onUpgrade);
      closed ??= Promise.all([front.close(), options.reads?.close()]).then(() => undefined);
      return closed;
    },
  };
}
