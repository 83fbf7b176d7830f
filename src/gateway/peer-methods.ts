// The owner's side of a forwarded per-session write (docs/scale-out.md "Per-session writes in many
// mode"): each write is a peer call `method:<name>` a core serves while it is open, run on that core
// as the global holder's client asked it. The global holder authorized the client already (its token);
// the peer call's key (derived from the relay secret) proves the global holder. A session this core
// does not hold now (its partition moved since the caller read the owner) is refused with NOT_OWNER,
// nothing run.
import { z } from "zod";
import { SwitchboardError } from "../errors.js";
import type { GatewayCore } from "./gateway-core.js";
import { METHODS } from "./method-table.js";
import { parseParams } from "./methods/method.js";
import type { PeerHandler, PeerHandlers } from "./peer-handlers.js";
import { SESSION_WRITE_NAMES, peerMethodName, writtenSession } from "./session-writes.js";

/** What the global holder sends with a write: the method's params and the id of the client that asked (for logs). */
const ForwardedSchema = z.strictObject({ params: z.unknown(), client: z.string().min(1) });

/** The params a forward of `method` sends; the owner runs them as `client`'s. */
export const forwardedParams = (params: unknown, client: string) => ({ params, client });

/** What a core serves forwarded writes with. */
export interface PeerMethodsDeps {
  core: GatewayCore;
  /** whether the core holds the partition of canonical key `key` */
  holds(key: string): boolean;
  nodeId: string;
}

async function runHere(deps: PeerMethodsDeps, name: string, raw: unknown): Promise<unknown> {
  const forwarded = ForwardedSchema.safeParse(raw);
  if (!forwarded.success)
    throw new SwitchboardError("INVALID_REQUEST", `peer call ${peerMethodName(name)} expects { params, client }`);
  const method = METHODS.get(name)!;
  const params = parseParams(method, forwarded.data.params);
  const key = writtenSession(name, params, deps.core);
  if (key !== undefined && !deps.holds(key))
    throw new SwitchboardError(
      "NOT_OWNER",
      `gateway ${deps.nodeId} does not hold session ${key} now (its partition moved); ${name} was not run there`,
    );
  return method.handle(deps.core, params, { client: forwarded.data.client });
}

/** Serves every per-session write as peer call `method:<name>` on `deps.core`; returns the removal of them all (the core stops). */
export function servePeerMethods(handlers: PeerHandlers, deps: PeerMethodsDeps): () => void {
  const removals = SESSION_WRITE_NAMES.map((name) => {
    const handler: PeerHandler = (raw) => runHere(deps, name, raw);
    return handlers.set(peerMethodName(name), handler);
  });
  return () => {
    for (const remove of removals) remove();
  };
}
