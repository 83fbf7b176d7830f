import type { WebSocket } from "ws";
import type { EventHub } from "./event-hub.js";
import { type EventSelection, NO_EVENTS, wantsEvent } from "./event-subscription.js";
import type { GatewayCore } from "./gateway-core.js";
import { dispatchRequest, frameId } from "./dispatch-request.js";
import { METHODS } from "./method-table.js";
import { ConnectParamsSchema, GatewayErrorCodes } from "./protocol.js";
import type { TokenGuard } from "./token-guard.js";

/** What a client may read from the first bytes of a frame it sent; JSON text objects only. */
function parseFrame(data: unknown, isBinary: boolean): { frame: Record<string, unknown> } | { error: string } {
  if (isBinary) return { error: "frames are JSON text, not binary" };
  let raw: unknown;
  try {
    raw = JSON.parse(String(data));
  } catch {
    return { error: "frames are JSON" };
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return { error: 'a frame is a JSON object {type:"req", id, method, params}' };
  return { frame: raw as Record<string, unknown> };
}

/** Who a WebSocket client is and what it must do to stay. */
export interface ClientOptions {
  /** its name in logs and `connect`'s answer, e.g. "client-7" */
  client: string;
  /** the address failed tokens count against */
  address: string;
  guard: TokenGuard;
  /** ms it has to send a good `connect`; then it is closed with 4401 */
  connectDeadlineMs: number;
  /** called once it has authenticated or gone (it then no longer counts as pending) */
  onSettled: () => void;
}

/** Why a `connect` frame does not authenticate, or undefined when it does. */
function connectRefusal(frame: Record<string, unknown>, options: ClientOptions): string | undefined {
  if (frame.method !== "connect") return "the first request must be connect";
  const params = ConnectParamsSchema.safeParse(frame.params ?? {});
  if (!params.success) return "invalid connect params";
  const wait = options.guard.retryAfterSeconds(options.address);
  if (wait > 0) return `too many failed attempts; retry in ${wait} s`;
  return options.guard.check(options.address, params.data.auth?.token) ? undefined : "invalid or missing auth.token";
}

/** One client's connection as its frames see it. */
interface Connection {
  core: GatewayCore;
  events: EventHub;
  socket: WebSocket;
  options: ClientOptions;
  send: (frame: unknown) => void;
  /** Ends the connect deadline and tells the owner the client is no longer pending. */
  settle: () => void;
  connected: boolean;
  selection: EventSelection;
  unsubscribe?: () => void;
}

/** Sends a frame while the socket is open; a send to a closing client is only logged. */
function frameSender(core: GatewayCore, socket: WebSocket, client: string): (frame: unknown) => void {
  return (frame) => {
    if (socket.readyState === socket.OPEN)
      socket.send(
        JSON.stringify(frame),
        (err) => err && core.logger.debug({ client, err }, "send to a closing client failed"),
      );
  };
}

const refuse = (conn: Connection, id: string, code: string, message: string) =>
  conn.send({ type: "res", id, ok: false, error: { code, message } });

/** Answers the first request: it must be a `connect` that authenticates, else the socket closes with 4401. */
function connectClient(conn: Connection, frame: Record<string, unknown>): void {
  const refusal = connectRefusal(frame, conn.options);
  if (refusal) {
    refuse(conn, frameId(frame), GatewayErrorCodes.UNAUTHORIZED, refusal);
    return void conn.socket.close(4401, "unauthorized");
  }
  conn.connected = true;
  conn.settle();
  conn.unsubscribe = conn.events.subscribe((event) => wantsEvent(conn.selection, event) && conn.send(event));
  conn.send({
    type: "res",
    id: frameId(frame),
    ok: true,
    payload: { protocol: 1, client: conn.options.client, methods: [...METHODS.keys()] },
  });
}

async function handleFrame(conn: Connection, data: unknown, isBinary: boolean): Promise<void> {
  const parsed = parseFrame(data, isBinary);
  if ("error" in parsed) return refuse(conn, "", GatewayErrorCodes.INVALID_REQUEST, parsed.error);
  const { frame } = parsed;
  if (!conn.connected) return connectClient(conn, frame);
  const { client } = conn.options;
  conn.send(await dispatchRequest(conn.core, frame, { client, subscribe: (next) => (conn.selection = next) }));
}

/**
 * One WebSocket client: `connect` (with the token when one is set) within the deadline first,
 * then requests. Events reach it only for the sessions it subscribed to. Every failure is
 * answered or logged; none escapes the connection.
 */
export function attachClient(core: GatewayCore, events: EventHub, socket: WebSocket, options: ClientOptions): void {
  const { client } = options;
  const conn: Connection = {
    core,
    events,
    socket,
    options,
    send: frameSender(core, socket, client),
    settle: () => {
      clearTimeout(deadline);
      options.onSettled();
    },
    connected: false,
    selection: NO_EVENTS,
  };
  // An idle socket that never authenticates would hold a descriptor for ever.
  const deadline = setTimeout(() => {
    refuse(conn, "", GatewayErrorCodes.UNAUTHORIZED, `no connect within ${options.connectDeadlineMs} ms`);
    socket.close(4401, "connect timeout");
  }, options.connectDeadlineMs);
  socket.on("message", (data, isBinary) => {
    handleFrame(conn, data, isBinary).catch((err: unknown) => {
      core.logger.error({ client, err }, "websocket frame failed");
      refuse(conn, "", GatewayErrorCodes.INTERNAL, "the gateway failed on this frame; see its log");
    });
  });
  // Oversized frames, bad UTF-8 or a reset connection: ws closes the socket after this event.
  socket.on("error", (err) => core.logger.warn({ client, err }, "websocket client error"));
  socket.on("close", () => {
    conn.settle();
    conn.unsubscribe?.();
  });
}
