import type http from "node:http";
import { ERROR_CATALOGUE, type ErrorCode, httpStatusOf } from "../errors.js";
import { dispatchRequest } from "./dispatch-request.js";
import type { GatewayCore } from "./gateway-core.js";
import { sendRefusal } from "./edge-refusal.js";
import { type RequestPolicy, bearerToken, isLoopback, refusalOf } from "./request-guard.js";
import type { TokenGuard } from "./token-guard.js";
import { serveWebAsset } from "./web-assets.js";
import { contentTypeProblem, readJsonBody } from "../hooks/read-json-body.js";
import { serveMetrics, serveReadyz } from "./probe-routes.js";

/** The largest JSON body the gateway reads; a bigger one gets 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

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

/** The request policy and the token guard of one gateway. */
interface HttpPolicy extends RequestPolicy {
  guard: TokenGuard;
}

/**
 * The gateway's HTTP auth (`/tools/invoke`, `/metrics`): loopback without a token, else the bearer
 * token, whose failures count per client. False once the refusal is written.
 */
function authorize(req: http.IncomingMessage, res: http.ServerResponse, policy: HttpPolicy): boolean {
  if (policy.token === undefined) {
    if (isLoopback(req.socket.remoteAddress)) return true;
    failure(res, "UNAUTHORIZED", "only loopback clients without a token");
    return false;
  }
  const client = policy.guard.clientOf(req);
  const wait = policy.guard.retryAfterSeconds(client);
  if (wait > 0) {
    sendRefusal(res, "RATE_LIMITED", `too many failed attempts; retry in ${wait} s`, { "retry-after": String(wait) });
    return false;
  }
  if (policy.guard.check(client, bearerToken(req.headers.authorization))) return true;
  failure(res, "UNAUTHORIZED", "missing or wrong bearer token");
  return false;
}

/**
 * Whether a caller may see details (`/readyz` parts). A presented token counts like any other
 * attempt (a wrong one is a failure, a locked-out client sees no details), so the answer cannot be
 * used to guess tokens past the limit; a caller without one just gets the verdict.
 */
function mayReadDetails(req: http.IncomingMessage, policy: HttpPolicy): boolean {
  if (refusalOf(req, policy) !== undefined) return false;
  if (policy.token === undefined) return isLoopback(req.socket.remoteAddress);
  const given = bearerToken(req.headers.authorization);
  if (given === undefined) return false;
  const client = policy.guard.clientOf(req);
  return policy.guard.retryAfterSeconds(client) === 0 && policy.guard.check(client, given);
}

/** `POST /tools/invoke`: the `tools.invoke` params as a JSON body. */
async function toolsInvoke(
  core: GatewayCore,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  policy: HttpPolicy,
): Promise<void> {
  if (req.method !== "POST") return failure(res, "METHOD_NOT_ALLOWED", "use POST", { allow: "POST" });
  // A browser sends text/plain cross-site without a preflight; JSON needs one. Refused before the token counts.
  const wrongType = contentTypeProblem(req);
  if (wrongType) return failure(res, wrongType.code, wrongType.message);
  if (!authorize(req, res, policy)) return;
  // A 413 keeps the connection: the rest of the body is read and dropped (readJsonBody, or Node past
  // the answer), so a client still sending, such as a standby's relay, is not reset before it reads the answer.
  const body = await readJsonBody(req, MAX_BODY_BYTES);
  if ("code" in body) return failure(res, body.code, body.message);
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
 * Liveness: 200 while the process serves HTTP. With the database away it says `degraded` and why
 * (still 200: restarting the gateway would not bring the database back; writes wait for it).
 */
function serveHealthz(core: GatewayCore, res: http.ServerResponse) {
  const storage = core.storageHealth();
  if (storage.ok) return json(res, 200, { ok: true });
  return json(res, 200, {
    ok: true,
    status: "degraded",
    reason: `PostgreSQL is unreachable: ${storage.reason}`,
    since: new Date(storage.since).toISOString(),
  });
}

/**
 * `GET /healthz`, platform webhooks, then (for callers that pass the Host and Origin checks) the
 * control UI (`/` and `/ui/...`) and `POST /tools/invoke`.
 */
export async function handleHttp(
  core: GatewayCore,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  policy: HttpPolicy,
  assets: Parameters<typeof serveWebAsset>[0] = new Map(),
): Promise<void> {
  const url = new URL(req.url ?? "/", "http://gateway");
  const isAsset = assets.has(url.pathname);
  if (req.method === "GET" && url.pathname === "/healthz") return serveHealthz(core, res);
  if (req.method === "GET" && url.pathname === "/readyz") return serveReadyz(core, res, mayReadDetails(req, policy));
  // A stopping gateway answers its probes and metrics only: hooks, webhooks and the API get 503, so senders retry.
  if (core.readiness.phase() === "draining" && url.pathname !== "/metrics")
    return failure(res, "UNAVAILABLE", "the gateway is stopping; try again once it is back");
  // Inbound hooks authenticate themselves (their own token, JSON only, size-limited; src/hooks/), after
  // refusing any browser request (403, never counted as a failed token). No Host check: see src/hooks/hooks-handler.ts.
  if (await core.hooks.handle(req, res, url)) return;
  const refusal = refusalOf(req, policy);
  // Platform webhooks authenticate themselves (Telegram's secret header), not with the gateway token.
  if (url.pathname !== "/tools/invoke" && !isAsset) {
    for (const adapter of core.adapters.values()) if (await adapter.handleHttp?.(req, res)) return;
  }
  if (refusal) {
    core.logger.warn(
      { origin: req.headers.origin, host: req.headers.host, path: url.pathname, reason: refusal },
      "http request refused",
    );
    return sendRefusal(res, "FORBIDDEN", refusal);
  }
  // The control UI (web/ and its vendored libraries); the page then speaks the WebSocket protocol.
  if (isAsset && serveWebAsset(assets, req, res, url.pathname)) return;
  if (url.pathname === "/metrics") {
    if (req.method !== "GET") return failure(res, "METHOD_NOT_ALLOWED", "use GET", { allow: "GET" });
    if (authorize(req, res, policy)) await serveMetrics(core, res);
    return;
  }
  if (url.pathname === "/tools/invoke") return toolsInvoke(core, req, res, policy);
  return failure(res, "NOT_FOUND", `no route ${req.method} ${url.pathname}`);
}
