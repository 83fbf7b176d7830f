// STAND-IN (task `wa`): the server side of task `writes`' peer call (docs/scale-out.md "N owners"),
// kept minimal with the interface of /work/helpers/s11/DESIGN.md; the lead takes `writes`' file at
// merge. A core registers the names it answers; `POST /cluster/call` runs them.
import type http from "node:http";
import { relayedClient } from "../cluster/relay-trust.js";
import { SwitchboardError } from "../errors.js";
import { ERROR_CATALOGUE } from "../errors/error-catalogue.js";
import { readJsonBody } from "../hooks/read-json-body.js";

/** One named thing a peer may ask this gateway's core to do. */
export type PeerHandler = (params: unknown) => Promise<unknown>;

/** name -> handler; a core registers its handlers when it opens, removes them when it stops */
export interface PeerHandlers {
  set(name: string, handler: PeerHandler): () => void; // returns the removal
  get(name: string): PeerHandler | undefined;
}

/** The process's one table of peer handlers. */
export function createPeerHandlers(): PeerHandlers {
  const handlers = new Map<string, PeerHandler>();
  return {
    set(name, handler) {
      handlers.set(name, handler);
      return () => {
        if (handlers.get(name) === handler) handlers.delete(name);
      };
    },
    get: (name) => handlers.get(name),
  };
}

function answer(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
  res.end(JSON.stringify(body));
}

/** Serves `POST /cluster/call` (a request carrying the relay secret, already checked at the server's edge). */
export async function servePeerCall(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  peers: { nodeId: string; handlers: PeerHandlers },
): Promise<void> {
  const fail = (code: "UNAVAILABLE" | "NOT_FOUND" | "UNAUTHORIZED" | "INVALID_REQUEST", message: string) =>
    answer(res, ERROR_CATALOGUE[code].status, { ok: false, error: { code, message } });
  if (relayedClient(req) === undefined) return fail("UNAUTHORIZED", "a peer call carries the schema's relay secret");
  const body = await readJsonBody(req, 1024 * 1024);
  if ("code" in body) return fail("INVALID_REQUEST", body.message);
  const { to, name, params } = body.value as { to?: unknown; name?: unknown; params?: unknown };
  if (to !== peers.nodeId) return fail("UNAVAILABLE", `this gateway is ${peers.nodeId}, not ${String(to)}`);
  const handler = typeof name === "string" ? peers.handlers.get(name) : undefined;
  if (!handler) return fail("NOT_FOUND", `no peer handler "${String(name)}" on ${peers.nodeId}`);
  try {
    answer(res, 200, { ok: true, result: (await handler(params)) ?? null });
  } catch (err) {
    if (!(err instanceof SwitchboardError)) throw err;
    answer(res, ERROR_CATALOGUE[err.code].status, { ok: false, error: { code: err.code, message: err.message } });
  }
}
