import type { WebSocket } from "ws";
import type { EventHub } from "./event-hub.js";
import { type EventSelection, NO_EVENTS, wantsEvent } from "./event-subscription.js";
import type { GatewayCore } from "./gateway-core.js";
import { dispatchRequest, frameId } from "./dispatch-request.js";
import { METHODS } from "./method-table.js";
import { ConnectParamsSchema, GatewayErrorCodes } from "./protocol.js";
import { tokenMatches } from "./request-guard.js";

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

/**
 * One WebSocket client: `connect` (with the token when one is set) first, then requests. Events
 * reach it only for the sessions it subscribed to. Every failure is answered or logged; none
 * escapes the connection.
 */
export function attachClient(
  core: GatewayCore,
  events: EventHub,
  socket: WebSocket,
  client: string,
  token: string | undefined,
): void {
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

  async function handle(data: unknown, isBinary: boolean): Promise<void> {
    const parsed = parseFrame(data, isBinary);
    if ("error" in parsed) return refuse("", GatewayErrorCodes.INVALID_REQUEST, parsed.error);
    const { frame } = parsed;
    if (!connected) {
      const params = frame.method === "connect" ? ConnectParamsSchema.safeParse(frame.params ?? {}) : undefined;
      if (!params?.success || !tokenMatches(token, params.data.auth?.token)) {
        const message =
          frame.method !== "connect"
            ? "the first request must be connect"
            : !params?.success
              ? "invalid connect params"
              : "invalid or missing auth.token";
        refuse(frameId(frame), GatewayErrorCodes.UNAUTHORIZED, message);
        return void socket.close(4401, "unauthorized");
      }
      connected = true;
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
  socket.on("close", () => unsubscribe?.());
}
