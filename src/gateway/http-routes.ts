import type http from "node:http";
import type { GatewayCore } from "./gateway-core.js";
import { dispatchRequest, isLoopback, tokenMatches } from "./gateway-server.js";
import { GatewayErrorCodes } from "./protocol.js";
import { WEBCHAT_HTML } from "./webchat-page.js";

const STATUS_OF: Record<string, number> = {
  [GatewayErrorCodes.INVALID_REQUEST]: 400,
  [GatewayErrorCodes.UNAUTHORIZED]: 401,
  [GatewayErrorCodes.NOT_FOUND]: 404,
  [GatewayErrorCodes.METHOD_NOT_FOUND]: 404,
  [GatewayErrorCodes.UNAVAILABLE]: 503,
  [GatewayErrorCodes.INTERNAL]: 500,
};

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
  res.end(JSON.stringify(body));
}

async function readBody(req: http.IncomingMessage, limit = 1024 * 1024): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new Error("body too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Whether an HTTP caller may use the API: the bearer token when one is set, else loopback only. */
function authorized(req: http.IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) return isLoopback(req.socket.remoteAddress);
  const header = req.headers.authorization ?? "";
  return header.startsWith("Bearer ") && tokenMatches(token, header.slice(7).trim());
}

/** `GET /healthz`, `POST /tools/invoke` and the web chat page at `/`. */
export async function handleHttp(core: GatewayCore, req: http.IncomingMessage, res: http.ServerResponse, token: string | undefined): Promise<void> {
  const url = new URL(req.url ?? "/", "http://gateway");
  if (req.method === "GET" && url.pathname === "/healthz") return json(res, 200, { ok: true });
  if (req.method === "GET" && url.pathname === "/") {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-security-policy": "default-src 'self' 'unsafe-inline'; connect-src 'self' ws: wss:" });
    return void res.end(WEBCHAT_HTML);
  }
  // Inbound hooks have their own token, content-type and size checks (src/hooks/).
  if (await core.hooks.handle(req, res, url)) return;
  // Platform webhooks authenticate themselves (Telegram's secret header), not with the gateway token.
  if (url.pathname !== "/tools/invoke") {
    for (const adapter of core.adapters.values()) if (await adapter.handleHttp?.(req, res)) return;
  }
  if (url.pathname !== "/tools/invoke") return json(res, 404, { ok: false, error: { code: GatewayErrorCodes.NOT_FOUND, message: `no route ${req.method} ${url.pathname}` } });
  if (req.method !== "POST") return json(res, 405, { ok: false, error: { code: GatewayErrorCodes.INVALID_REQUEST, message: "use POST" } });
  if (!authorized(req, token)) return json(res, 401, { ok: false, error: { code: GatewayErrorCodes.UNAUTHORIZED, message: "missing or wrong bearer token" } });
  let params: unknown;
  try {
    params = JSON.parse(await readBody(req));
  } catch (err) {
    return json(res, 400, { ok: false, error: { code: GatewayErrorCodes.INVALID_REQUEST, message: `body must be JSON: ${(err as Error).message}` } });
  }
  const response = await dispatchRequest(core, { type: "req", id: "http", method: "tools.invoke", params }, "http");
  if (response.ok) return json(res, 200, { ok: true, result: response.payload });
  return json(res, STATUS_OF[response.error.code] ?? 500, { ok: false, error: response.error });
}
