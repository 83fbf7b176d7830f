import type http from "node:http";
import { ERROR_CATALOGUE, type ErrorCode, httpStatusOf } from "../errors.js";
import { dispatchRequest } from "./dispatch-request.js";
import type { GatewayCore } from "./gateway-core.js";
import { type RequestPolicy, bearerToken, isLoopback, refusalOf, tokenMatches } from "./request-guard.js";
import { serveWebAsset } from "./web-assets.js";
import { serveMetrics, serveReadyz } from "./probe-routes.js";
import { readJsonBody } from "../hooks/read-json-body.js";

/** The largest JSON body the gateway reads; a bigger one gets 413. */
const MAX_BODY_BYTES = 1024 * 1024;

function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(JSON.stringify(body));
}

/** A JSON error: the HTTP status and the protocol code a client sees both come from the catalogue entry of `code`. */
const failure = (res: http.ServerResponse, code: ErrorCode, message: string, headers?: Record<string, string>) =>
  json(
    res,
    ERROR_CATALOGUE[code].status,
    { ok: false, error: { code: ERROR_CATALOGUE[code].method, message } },
    headers,
  );

/** Whether an HTTP caller may use the API: the bearer token when one is set, else loopback only. */
function authorized(req: http.IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) return isLoopback(req.socket.remoteAddress);
  return tokenMatches(token, bearerToken(req.headers.authorization));
}

/** True for `application/json`, with or without parameters (`; charset=utf-8`). */
/** `POST /tools/invoke`: the `tools.invoke` params as a JSON body. */
async function toolsInvoke(
  core: GatewayCore,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  policy: RequestPolicy,
): Promise<void> {
  if (req.method !== "POST") return failure(res, "METHOD_NOT_ALLOWED", "use POST", { allow: "POST" });
  if (!authorized(req, policy.token)) return failure(res, "UNAUTHORIZED", "missing or wrong bearer token");
  // A browser sends text/plain cross-site without a preflight; JSON needs one (415 otherwise).
  const body = await readJsonBody(req, MAX_BODY_BYTES);
  if ("code" in body)
    return failure(res, body.code, body.message, body.code === "TOO_LARGE" ? { connection: "close" } : undefined);
  const params = body.value;
  const response = await dispatchRequest(
    core,
    { type: "req", id: "http", method: "tools.invoke", params },
    { client: "http" },
  );
  if (response.ok) return json(res, 200, { ok: true, result: response.payload });
  return json(res, httpStatusOf(response.error.code), { ok: false, error: response.error });
}

/**
 * `GET /healthz`, platform webhooks, then (for callers that pass the Host and Origin checks) the
 * control UI (`/` and `/ui/...`) and `POST /tools/invoke`.
 */
export async function handleHttp(
  core: GatewayCore,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  policy: RequestPolicy,
  assets: Parameters<typeof serveWebAsset>[0] = new Map(),
): Promise<void> {
  const url = new URL(req.url ?? "/", "http://gateway");
  const isAsset = assets.has(url.pathname);
  if (req.method === "GET" && url.pathname === "/healthz") return json(res, 200, { ok: true });
  if (req.method === "GET" && url.pathname === "/readyz")
    return serveReadyz(core, res, refusalOf(req, policy) === undefined && authorized(req, policy.token));
  // A stopping gateway answers its probes and metrics only: hooks, webhooks and the API get 503, so senders retry.
  if (core.readiness.phase() === "draining" && url.pathname !== "/metrics")
    return failure(res, "UNAVAILABLE", "the gateway is stopping; try again once it is back");
  // Inbound hooks authenticate themselves (their own token, JSON only, size-limited; src/hooks/), like platform webhooks.
  if (await core.hooks.handle(req, res, url)) return;
  // Platform webhooks authenticate themselves (Telegram's secret header), not with the gateway token.
  if (url.pathname !== "/tools/invoke" && !isAsset) {
    for (const adapter of core.adapters.values()) if (await adapter.handleHttp?.(req, res)) return;
  }
  const refusal = refusalOf(req, policy);
  if (refusal) {
    core.logger.warn(
      { origin: req.headers.origin, host: req.headers.host, path: url.pathname, reason: refusal },
      "http request refused",
    );
    return failure(res, "FORBIDDEN", refusal);
  }
  // The control UI (web/ and its vendored libraries); the page then speaks the WebSocket protocol.
  if (isAsset && serveWebAsset(assets, req, res, url.pathname)) return;
  if (url.pathname === "/metrics") {
    if (req.method !== "GET") return failure(res, "METHOD_NOT_ALLOWED", "use GET", { allow: "GET" });
    if (!authorized(req, policy.token)) return failure(res, "UNAUTHORIZED", "missing or wrong bearer token");
    return serveMetrics(core, res);
  }
  if (url.pathname === "/tools/invoke") return toolsInvoke(core, req, res, policy);
  return failure(res, "NOT_FOUND", `no route ${req.method} ${url.pathname}`);
}
