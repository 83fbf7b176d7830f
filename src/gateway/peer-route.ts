// `POST /cluster/call` (docs/scale-out.md "The peer call"): another gateway of the schema asks this
// one's core to run a handler by name (./peer-handlers.ts). Served by the global holder's gateway
// server and by a partition member's front, each from its own core: never relayed on. The caller
// proves itself with the peer key (derived from the schema's relay secret, ../cluster/peer-key.ts);
// a wrong or missing one is 401 and counts as a failed attempt of its client in the route's own
// limiter (10 in a minute lock a client out for 5 minutes, with or without a gateway token; never
// loopback). 200 means a handler answered: the body says how.
import type http from "node:http";
import { z } from "zod";
import { PEER_CALL_PATH } from "../cluster/peer-call.js";
import { PEER_KEY_HEADER, isPeerKey } from "../cluster/peer-key.js";
import { ERROR_CATALOGUE, type ErrorCode, SwitchboardError, logError, resultError } from "../errors.js";
import { createAuthLimiter } from "../hooks/hook-auth.js";
import type { Logger } from "../logger.js";
import { readJsonBody } from "../hooks/read-json-body.js";
import { sendRefusal } from "./edge-refusal.js";
import { MAX_BODY_BYTES } from "./http-routes.js";
import type { PeerHandlers } from "./peer-handlers.js";
import { isLoopback } from "./request-guard.js";
import type { TokenGuard } from "./token-guard.js";

/** Failed peer keys per client: 10 in a minute lock it out for 5 minutes (its own count, not the token's). */
export function createPeerLimiter(now: () => number = Date.now) {
  return createAuthLimiter({ now, maxFailures: 10, windowMs: 60_000, lockoutMs: 5 * 60_000 });
}

/** A call the holder accepted within the gateway's JSON limit still fits once wrapped as `{ to, name, params }`. */
const ENVELOPE_BYTES = 64 * 1024;

/** What {@link servePeerCall} needs. */
export interface PeerRouteDeps {
  handlers: PeerHandlers;
  /** this gateway's node id: a call to another is refused with 503 (the caller reads the address again) */
  nodeId(): string;
  /** the schema's relay secret */
  relaySecret(): Promise<string>;
  /** the gateway's token guard: which client a request counts as */
  guard: Pick<TokenGuard, "clientOf">;
  /** failed peer keys per client, and the lockout ({@link createPeerLimiter}) */
  limiter: ReturnType<typeof createPeerLimiter>;
  logger: Logger;
}

const CallSchema = z.strictObject({ to: z.string().min(1), name: z.string().min(1), params: z.unknown() });

/** Whether `req` is a peer call (any method: a GET gets 405 here, not the owner's routes). */
export function isPeerCall(req: http.IncomingMessage): boolean {
  return new URL(req.url ?? "/", "http://gateway").pathname === PEER_CALL_PATH;
}

function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers });
  res.end(JSON.stringify(body));
}

/** A refusal before any handler ran: the catalogue's status, its code in the body. */
function refuse(res: http.ServerResponse, code: ErrorCode, message: string, headers?: Record<string, string>): void {
  json(res, ERROR_CATALOGUE[code].status, { ok: false, error: { code, message } }, headers);
}

/** The caller's proof: the peer key, or a counted failure (401), or its lockout (429). False once refused. */
async function authorized(req: http.IncomingMessage, res: http.ServerResponse, deps: PeerRouteDeps) {
  const client = deps.guard.clientOf(req);
  const counted = !isLoopback(client);
  const wait = counted ? deps.limiter.retryAfterSeconds(client) : 0;
  if (wait > 0) {
    sendRefusal(res, "RATE_LIMITED", `too many failed attempts; retry in ${wait} s`, { "retry-after": String(wait) });
    return false;
  }
  const given = req.headers[PEER_KEY_HEADER];
  delete req.headers[PEER_KEY_HEADER];
  if (isPeerKey(await deps.relaySecret(), given)) return true;
  if (counted) deps.limiter.fail(client);
  deps.logger.warn({ client }, "peer call refused: missing or wrong peer key");
  refuse(res, "UNAUTHORIZED", `a peer call needs the schema's peer key (${PEER_KEY_HEADER})`);
  return false;
}

/**
 * The handler's answer: its result, or its error's catalogue code and message (as the caller's own
 * result edge would show it: a retryable DATABASE_UNAVAILABLE stays itself); an unexpected error is
 * INTERNAL, logged here with its error id, which the message names with this gateway.
 */
async function answer(res: http.ServerResponse, deps: PeerRouteDeps, call: z.output<typeof CallSchema>) {
  const handler = deps.handlers.get(call.name);
  if (!handler) return refuse(res, "NOT_FOUND", `gateway ${call.to} serves no peer call ${call.name} right now`);
  try {
    json(res, 200, { ok: true, result: (await handler(call.params)) ?? null });
  } catch (err) {
    const fields = { name: call.name };
    if (err instanceof SwitchboardError) {
      if (ERROR_CATALOGUE[err.code].log !== "info") logError(deps.logger, err, "peer call failed", fields);
      return json(res, 200, { ok: false, error: { code: err.code, message: err.message } });
    }
    const { message } = resultError(err, deps.logger, "peer call failed", fields);
    json(res, 200, { ok: false, error: { code: "INTERNAL", message: `gateway ${call.to}: ${message}` } });
  }
}

/** Serves one `POST /cluster/call`: 405, 429/401, 415/413/400, 503 (not this node), 404 (no handler), else 200. */
export async function servePeerCall(req: http.IncomingMessage, res: http.ServerResponse, deps: PeerRouteDeps) {
  if (req.method !== "POST") return refuse(res, "METHOD_NOT_ALLOWED", "use POST", { allow: "POST" });
  if (!(await authorized(req, res, deps))) return;
  const body = await readJsonBody(req, MAX_BODY_BYTES + ENVELOPE_BYTES);
  if ("code" in body) return refuse(res, body.code, body.message);
  const call = CallSchema.safeParse(body.value);
  if (!call.success) return refuse(res, "INVALID_REQUEST", "expected { to, name, params }");
  if (call.data.to !== deps.nodeId())
    return refuse(res, "UNAVAILABLE", `this gateway is ${deps.nodeId()}, not ${call.data.to}`, { "retry-after": "1" });
  await answer(res, deps, call.data);
}
