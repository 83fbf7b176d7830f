// One relayed WebSocket (./owner-relay.ts): frames go both ways unchanged (with backpressure,
// ./relay-flow.ts), a close on one side closes the other with the same code, and an owner that
// vanished without a close frame (SIGKILL, a reset, no pong) closes the client with 1012 "service
// restart" so it reconnects (to the new owner).
import type http from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, type WebSocketServer } from "ws";
import type { Logger } from "../logger.js";
import { joinHostPort } from "./host-port.js";
import { type RelayReadsDeps, relayReads } from "./relay-reads.js";
import { CLIENT_TOO_SLOW, OWNER_TOO_SLOW, type RelayFlow, forwardFrames, watchOwner } from "./relay-flow.js";
import type { OwnerAddress } from "./standby-front.js";

/** Where and how one request is relayed, and what to tell the standby after. */
export interface Target {
  owner: OwnerAddress;
  host: string;
  port: number;
  headers: http.OutgoingHttpHeaders;
  /** the owner could not be reached: it is read again */
  failed(): void;
}

/** The target of one request; undefined when no owner is known. */
export type RelayTarget = (req: http.IncomingMessage) => Promise<Target | undefined>;

/** The close a client gets while no owner can be reached: "try again later". */
const NO_OWNER = { code: 1013, reason: "no owner of this schema answers; retry" } as const;

/** The close a client gets when its owner went away without a word, or the standby now owns the schema. */
export const OWNER_GONE = { code: 1012, reason: "the schema's owner changed; reconnect" } as const;

/** Codes a close frame may carry (RFC 6455 7.4); 1005 and 1006 only say that none was received. */
function sendable(code: number): boolean {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
}

/** Closes `ws` with `code` when a frame may carry it, else without one; a socket already closing is left alone. */
function closeWith(ws: WebSocket, code: number, reason: Buffer | string): void {
  if (ws.readyState === WebSocket.CLOSING || ws.readyState === WebSocket.CLOSED) return;
  // Reads paused by backpressure would never see the peer's close frame: the handshake needs them.
  if (ws.isPaused) ws.resume();
  if (sendable(code)) ws.close(code, reason);
  else ws.close();
}

/** Closes `ws` with `close`, and cuts it off if its peer has not answered within 1 s (it may read nothing). */
function closeFirmly(ws: WebSocket, close: { code: number; reason: string }): void {
  closeWith(ws, close.code, close.reason);
  setTimeout(() => ws.terminate(), 1_000).unref();
}

/**
 * Pipes `client` and `upstream` (the owner) both ways until either closes, with backpressure and
 * the owner pinged (./relay-flow.ts); resolves when both are closed.
 */
function pipeSockets(client: WebSocket, upstream: WebSocket, deps: UpgradeRelayDeps): Promise<void> {
  const { logger, flow } = deps;
  // Frames the standby held back (./relay-reads.ts) go on through the same bounds as the others.
  let sendOn: (data: WebSocket.RawData, isBinary: boolean) => void = () => undefined;
  const relays = deps.reads
    ? relayReads(client, upstream, deps.reads, (data, isBinary) => sendOn(data, isBinary))
    : undefined;
  const toOwner = forwardFrames(
    client,
    upstream,
    flow,
    () => {
      logger.warn({ bufferedAmount: upstream.bufferedAmount }, "relayed WebSocket closed: the owner does not read");
      closeWith(client, OWNER_TOO_SLOW.code, OWNER_TOO_SLOW.reason);
      upstream.terminate();
    },
    relays,
  );
  sendOn = toOwner.send;
  const stops = [
    toOwner.stop,
    forwardFrames(upstream, client, flow, () => {
      logger.warn({ bufferedAmount: client.bufferedAmount }, "relayed WebSocket closed: the client does not read");
      closeWith(upstream, CLIENT_TOO_SLOW.code, CLIENT_TOO_SLOW.reason);
      closeFirmly(client, CLIENT_TOO_SLOW);
    }).stop,
    watchOwner(upstream, flow.pingMs, () =>
      logger.warn({ pingMs: flow.pingMs }, "relayed WebSocket's owner answered no ping; closing it 1012"),
    ),
  ];
  // A socket error is followed by its close event, which closes the other side.
  client.on("error", (err) => logger.debug({ err }, "relayed client socket error"));
  upstream.on("error", (err) => logger.debug({ err }, "relay socket to the owner failed"));
  const closed = (ws: WebSocket) => new Promise<void>((resolve) => ws.once("close", () => resolve()));
  const both = Promise.all([closed(client), closed(upstream)]).then(() => {
    for (const stop of stops) stop();
  });
  client.once("close", (code, reason) => {
    if (code === 1006) upstream.terminate();
    else closeWith(upstream, code, reason);
  });
  upstream.once("close", (code, reason) => {
    if (code === 1006) closeWith(client, OWNER_GONE.code, OWNER_GONE.reason);
    else closeWith(client, code, reason);
  });
  return both;
}

/** The owner refused the upgrade (403, 429, 503...): the same answer, written on the client's raw socket. */
function passRefusal(answer: http.IncomingMessage, write: (response: string) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  answer.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size <= 64 * 1024) chunks.push(chunk); // a refusal is one small JSON line; more is cut off
  });
  answer.on("error", () => answer.destroy());
  answer.on("end", () => {
    const body = Buffer.concat(chunks).toString();
    const type = answer.headers["content-type"] ?? "application/json; charset=utf-8";
    const retry = answer.headers["retry-after"] ? `retry-after: ${answer.headers["retry-after"]}\r\n` : "";
    write(
      `HTTP/1.1 ${answer.statusCode} ${answer.statusMessage ?? ""}\r\ncontent-type: ${type}\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\n${retry}connection: close\r\n\r\n${body}`,
    );
  });
}

/** The handshake headers for the owner: the relayed ones minus those ws writes itself (its key, version, extensions) and Host. */
function handshakeHeaders(headers: http.OutgoingHttpHeaders): http.OutgoingHttpHeaders {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => name !== "host" && !name.startsWith("sec-websocket-")),
  );
}

/** What {@link relayUpgrade} needs. */
interface UpgradeRelayDeps {
  logger: Logger;
  /** accepts the clients (its `clients` are the relayed sockets) */
  wss: WebSocketServer;
  target: RelayTarget;
  /** backpressure bounds and the owner's ping (./relay-flow.ts) */
  flow: RelayFlow;
  /** the reads the standby answers itself (./relay-reads.ts); absent: every frame is relayed */
  reads?: RelayReadsDeps | undefined;
}

/** Completes the client's handshake and closes it 1013: no owner answers. */
function refuse(deps: UpgradeRelayDeps, req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
  deps.wss.handleUpgrade(req, socket, head, (client) => client.close(NO_OWNER.code, NO_OWNER.reason));
}

/**
 * Takes a client's upgrade: opens a WebSocket to the owner first, then completes the client's
 * handshake and pipes the two. The owner refusing the upgrade: its answer goes to the client as it
 * is; no owner, or none answering: the handshake completes and the client is closed with 1013.
 */
export function relayUpgrade(deps: UpgradeRelayDeps) {
  return (req: http.IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on("error", (err) => deps.logger.debug({ err }, "relayed upgrade socket error"));
    void deps.target(req).then(
      (to) => (to ? connect(deps, { req, socket, head }, to) : refuse(deps, req, socket, head)),
      () => refuse(deps, req, socket, head),
    );
  };
}

/** One client's upgrade, held until the owner's side is open. */
interface PendingUpgrade {
  req: http.IncomingMessage;
  socket: Duplex;
  head: Buffer;
}

/** Opens the owner's side of one relayed WebSocket, then the client's (or passes the owner's refusal on). */
function connect(deps: UpgradeRelayDeps, { req, socket, head }: PendingUpgrade, to: Target): void {
  const upstream = new WebSocket(`ws://${joinHostPort(to.host, to.port)}${req.url ?? "/"}`, {
    headers: handshakeHeaders(to.headers),
    perMessageDeflate: false,
    handshakeTimeout: 5_000,
  });
  let settled = false;
  let piped = false;
  // The client left while the owner was being reached, or its handshake was refused: nothing to
  // relay; the owner's side is ended on purpose, so its error is no failure of the owner.
  socket.once("close", () => {
    if (piped) return;
    settled = true;
    upstream.terminate();
  });
  upstream.once("open", () => {
    settled = true;
    if (socket.destroyed) return void upstream.terminate();
    deps.wss.handleUpgrade(req, socket, head, (client) => {
      piped = true;
      void pipeSockets(client, upstream, deps);
    });
  });
  upstream.once("unexpected-response", (_request, answer) => {
    settled = true;
    passRefusal(answer, (response) => {
      socket.end(response);
      upstream.terminate();
    });
  });
  upstream.on("error", (err) => {
    if (settled) return;
    settled = true;
    deps.logger.warn(
      { owner: to.owner.nodeId, address: to.owner.address, err },
      "relayed WebSocket could not reach the owner",
    );
    to.failed();
    refuse(deps, req, socket, head);
  });
}
