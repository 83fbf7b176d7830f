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

/**
 * One WebSocket client: `connect` (with the token when one is set) within the deadline first,
 * then requests. Events reach it only for the sessions it subscribed to. Every failure is
 * answered or logged; none escapes the connection.
 */
export function attachClient(core: GatewayCore, events: EventHub, socket: WebSocket, options: ClientOptions): void {
  const { client } = options;
  let connected = false;
  let selection: EventSelection = NO_EVENTS;
  let unsubscribe: (() => void) | undefined;
  const send = (frame: unknown) => {
    if (socket.readyState === socket.OPEN)
      socket.send(
        JSON.stringify(frame),
        (err) => err && core.logger.debug({ client, err }, "send to a closing client failed"),
      );
  };
  const refuse = (id: string, code: string, message: string) =>
    send({ type: "res", id, ok: false, error: { code, message } });
  // An idle socket that never authenticates would hold a descriptor for ever.
  const deadline = setTimeout(() => {
    refuse("", GatewayErrorCodes.UNAUTHORIZED, `no connect within ${options.connectDeadlineMs} ms`);
    socket.close(4401, "connect timeout");
  }, options.connectDeadlineMs);
  const settle = () => {
    clearTimeout(deadline);
    options.onSettled();
  };

  async function handle(data: unknown, isBinary: boolean): Promise<void> {
    const parsed = parseFrame(data, isBinary);
    if ("error" in parsed) return refuse("", GatewayErrorCodes.INVALID_REQUEST, parsed.error);
    const { frame } = parsed;
    if (!connected) {
      const refusal = connectRefusal(frame, options);
      if (refusal) {
        refuse(frameId(frame), GatewayErrorCodes.UNAUTHORIZED, refusal);
        return void socket.close(4401, "unauthorized");
      }
      connected = true;
      settle();
      unsubscribe = events.subscribe((event) => wantsEvent(selection, event) && send(event));
      return send({
        type: "res",
        id: frameId(frame),
        ok: true,
        payload: { protocol: 1, client, methods: [...METHODS.keys()] },
      });
    }
    send(await dispatchRequest(core, frame, { client, subscribe: (next) => (selection = next) }));
  }

  socket.on("message", (data, isBinary) => {
    handle(data, isBinary).catch((err: unknown) => {
      core.logger.error({ client, err }, "websocket frame failed");
      refuse("", GatewayErrorCodes.INTERNAL, "the gateway failed on this frame; see its log");
    });
  });
  // Oversized frames, bad UTF-8 or a reset connection: ws closes the socket after this event.
  socket.on("error", (err) => core.logger.warn({ client, err }, "websocket client error"));
  socket.on("close", () => {
    settle();
    unsubscribe?.();
  });
}
