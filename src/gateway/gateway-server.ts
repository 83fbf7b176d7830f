import { timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { isSwitchboardError } from "../errors.js";
import type { GatewayCore } from "./gateway-core.js";
import type { EventHub } from "./event-hub.js";
import { METHODS } from "./method-table.js";
import { parseParams } from "./methods/method.js";
import { ConnectParamsSchema, GatewayError, GatewayErrorCodes, RequestFrameSchema, type ResponseFrame } from "./protocol.js";
import { handleHttp } from "./http-routes.js";

/** True for 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.replace(/^::ffff:/, "");
  return plain === "::1" || plain === "localhost" || /^127\.\d+\.\d+\.\d+$/.test(plain);
}

/** Constant-time token comparison. */
export function tokenMatches(expected: string | undefined, given: string | undefined): boolean {
  if (expected === undefined) return true;
  if (given === undefined) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Turns any thrown value into the `{code, message}` a client sees. */
export function toErrorShape(err: unknown): { code: (typeof GatewayErrorCodes)[keyof typeof GatewayErrorCodes]; message: string } {
  if (err instanceof GatewayError) return { code: err.code, message: err.message };
  if (isSwitchboardError(err)) return { code: err.code === "INVALID_SESSION_KEY" || err.code === "INVALID_ARGUMENT" ? GatewayErrorCodes.INVALID_REQUEST : GatewayErrorCodes.INTERNAL, message: err.message };
  return { code: GatewayErrorCodes.INTERNAL, message: err instanceof Error ? err.message : String(err) };
}

/** Runs one request frame against the method table. */
export async function dispatchRequest(core: GatewayCore, raw: unknown, client: string): Promise<ResponseFrame> {
  const frame = RequestFrameSchema.safeParse(raw);
  const id = typeof (raw as { id?: unknown })?.id === "string" ? (raw as { id: string }).id : "";
  if (!frame.success) return { type: "res", id, ok: false, error: { code: GatewayErrorCodes.INVALID_REQUEST, message: "expected {type:\"req\", id, method, params}" } };
  const method = METHODS.get(frame.data.method);
  if (!method) {
    return { type: "res", id: frame.data.id, ok: false, error: { code: GatewayErrorCodes.METHOD_NOT_FOUND, message: `unknown method "${frame.data.method}" (methods: ${[...METHODS.keys()].join(", ")})` } };
  }
  try {
    const payload = await method.handle(core, parseParams(method, frame.data.params), { client });
    return { type: "res", id: frame.data.id, ok: true, payload };
  } catch (err) {
    const error = toErrorShape(err);
    if (error.code === GatewayErrorCodes.INTERNAL) core.logger.error({ method: frame.data.method, err: error.message }, "gateway method failed");
    return { type: "res", id: frame.data.id, ok: false, error };
  }
}

function attachClient(core: GatewayCore, events: EventHub, socket: WebSocket, client: string, token: string | undefined): void {
  let connected = false;
  let unsubscribe: (() => void) | undefined;
  const send = (frame: unknown) => socket.readyState === socket.OPEN && socket.send(JSON.stringify(frame));
  socket.on("message", async (data) => {
    let raw: unknown;
    try {
      raw = JSON.parse(String(data));
    } catch {
      return send({ type: "res", id: "", ok: false, error: { code: GatewayErrorCodes.INVALID_REQUEST, message: "frames are JSON" } });
    }
    const frame = raw as { id?: string; method?: string; params?: unknown };
    if (!connected) {
      const params = frame.method === "connect" ? ConnectParamsSchema.safeParse(frame.params ?? {}) : undefined;
      if (!params?.success || !tokenMatches(token, params.data.auth?.token)) {
        const message = frame.method !== "connect" ? "the first request must be connect" : "invalid or missing auth.token";
        send({ type: "res", id: frame.id ?? "", ok: false, error: { code: GatewayErrorCodes.UNAUTHORIZED, message } });
        return socket.close(4401, "unauthorized");
      }
      connected = true;
      unsubscribe = events.subscribe(send);
      return send({ type: "res", id: frame.id ?? "", ok: true, payload: { protocol: 1, client, methods: [...METHODS.keys()] } });
    }
    send(await dispatchRequest(core, raw, client));
  });
  socket.on("close", () => unsubscribe?.());
}

/** A listening gateway server. */
export interface GatewayServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Serves the WebSocket protocol and HTTP (`/healthz`, `POST /tools/invoke`, the web chat) on one
 * port. Without a token only loopback clients are accepted.
 */
export async function listenGateway(core: GatewayCore, events: EventHub, options: { host: string; port: number; token?: string }): Promise<GatewayServer> {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4 * 1024 * 1024 });
  let clients = 0;
  const server = http.createServer((req, res) => void handleHttp(core, req, res, options.token));
  server.on("upgrade", (req, socket, head) => {
    if (options.token === undefined && !isLoopback(req.socket.remoteAddress)) {
      socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => attachClient(core, events, ws, `client-${++clients}`, options.token));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `ws://${host}:${port}`,
    port,
    async close() {
      for (const ws of wss.clients) ws.close(1001, "gateway stopping");
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
