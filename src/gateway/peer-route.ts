// `POST /cluster/call` (docs/scale-out.md "The peer call"): another gateway of the schema asks this
// one's core to run a handler by name (./peer-handlers.ts). Served by the global holder's gateway
// server and by a partition member's front, each from its own core: never relayed on. The caller
// proves itself with the schema's relay secret; a wrong or missing one is 401 and counts as a failed
// attempt of its client, as a wrong token does. 200 means a handler answered: the body says how.
import type http from "node:http";
import { z } from "zod";
import { PEER_CALL_PATH } from "../cluster/peer-call.js";
import { acceptRelayed, relayedClient } from "../cluster/relay-trust.js";
import { ERROR_CATALOGUE, type ErrorCode, SwitchboardError, logError, resultError } from "../errors.js";
import type { Logger } from "../logger.js";
import { readJsonBody } from "../hooks/read-json-body.js";
import { sendRefusal } from "./edge-refusal.js";
import { MAX_BODY_BYTES } from "./http-routes.js";
import type { PeerHandlers } from "./peer-handlers.js";
import type { TokenGuard } from "./token-guard.js";

/** What {@link servePeerCall} needs. */
export interface PeerRouteDeps {
  handlers: PeerHandlers;
  /** this gateway's node id: a call to another is refused with 503 (the caller reads the address again) */
  nodeId(): string;
  /** the schema's relay secret */
  relaySecret(): Promise<string>;
  /** the gateway's token guard: failed attempts per client, and the lockout */
  guard: TokenGuard;
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

/** The caller's proof: the relay secret, or a counted failure (401), or its lockout (429). False once refused. */
async function authorized(req: http.IncomingMessage, res: http.ServerResponse, deps: PeerRouteDeps) {
  const client = deps.guard.clientOf(req);
  const wait = deps.guard.retryAfterSeconds(client);
  if (wait > 0) {
    sendRefusal(res, "RATE_LIMITED", `too many failed attempts; retry in ${wait} s`, { "retry-after": String(wait) });
    return false;
  }
  acceptRelayed(req, await deps.relaySecret());
  if (relayedClient(req) !== undefined) return true;
  deps.guard.fail(client);
  deps.logger.warn({ client }, "peer call refused: missing or wrong relay secret");
  refuse(res, "UNAUTHORIZED", "a peer call needs the schema's relay secret (x-switchboard-relay)");
  return false;
}

/** The handler's answer: its result, or its error's catalogue code and message (an unexpected error: INTERNAL, logged). */
async function answer(res: http.ServerResponse, deps: PeerRouteDeps, call: z.output<typeof CallSchema>) {
  const handler = deps.handlers.get(call.name);
  if (!handler) return refuse(res, "NOT_FOUND", `gateway ${call.to} serves no peer call ${call.name} right now`);
  try {
    json(res, 200, { ok: true, result: (await handler(call.params)) ?? null });
  } catch (err) {
    const fields = { name: call.name };
    if (err instanceof SwitchboardError && ERROR_CATALOGUE[err.code].chat === "say") {
      logError(deps.logger, err, "peer call failed", fields);
      return json(res, 200, { ok: false, error: { code: err.code, message: err.message } });
    }
    const { message } = resultError(err, deps.logger, "peer call failed", fields);
    json(res, 200, { ok: false, error: { code: "INTERNAL", message } });
  }
}

/** Serves one `POST /cluster/call`: 405, 429/401, 415/413/400, 503 (not this node), 404 (no handler), else 200. */
export async function servePeerCall(req: http.IncomingMessage, res: http.ServerResponse, deps: PeerRouteDeps) {
  if (req.method !== "POST") return refuse(res, "METHOD_NOT_ALLOWED", "use POST", { allow: "POST" });
  if (!(await authorized(req, res, deps))) return;
  const body = await readJsonBody(req, MAX_BODY_BYTES);
  if ("code" in body) return refuse(res, body.code, body.message);
  const call = CallSchema.safeParse(body.value);
  if (!call.success) return refuse(res, "INVALID_REQUEST", "expected { to, name, params }");
  if (call.data.to !== deps.nodeId())
    return refuse(res, "UNAVAILABLE", `this gateway is ${deps.nodeId()}, not ${call.data.to}`, { "retry-after": "1" });
  await answer(res, deps, call.data);
}
