// The global holder's side of a forwarded per-session write (docs/scale-out.md "Per-session writes
// in many mode"): a write of a session another gateway holds goes to that gateway by peer call
// (../cluster/peer-call.ts), which runs it on its core (./peer-methods.ts); its answer is the
// client's. A peer that ran nothing (it no longer holds the partition: NOT_OWNER; unreachable, not
// the node read, no core open) is asked once more at the owner read again. A call that may have run
// (a timeout) is never sent twice.
import { type PeerCall, PeerRefusedError, type PeerTarget } from "../cluster/peer-call.js";
import { SwitchboardError } from "../errors.js";
import type { MethodCaller } from "./methods/method.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import { forwardedParams } from "./peer-methods.js";
import { ownerOf, peerMethodName } from "./session-writes.js";

/** Whether the peer ran nothing, so the write may go to the owner read again. */
const ranNothing = (err: unknown) =>
  err instanceof PeerRefusedError || (err instanceof SwitchboardError && err.code === "NOT_OWNER");

/** The gateway holding `key`'s partition and where it listens; UNAVAILABLE when none does (retry soon). */
async function ownerTarget(database: PostgresDatabase, method: string, key: string): Promise<PeerTarget> {
  const { owner, part, address } = await ownerOf(database, key);
  if (owner && address) return { nodeId: owner, address };
  const why = owner ? `gateway ${owner} holds it but has no address recorded` : "no gateway holds it right now";
  throw new SwitchboardError("UNAVAILABLE", `session ${key} is in partition ${part}: ${why}; retry ${method} soon`);
}

/** What a forward needs: the schema (to read the owner) and the process's peer call. */
export interface ForwardDeps {
  database: PostgresDatabase;
  call: PeerCall;
}

/** Runs `write.method` with parsed params `write.p` on the gateway holding session `write.key`, at most twice; its answer or its error. */
export async function forwardWrite(
  deps: ForwardDeps,
  write: { method: string; key: string; p: unknown },
  caller: MethodCaller,
): Promise<unknown> {
  const { method, key, p } = write;
  for (let attempt = 1; ; attempt++) {
    const target = await ownerTarget(deps.database, method, key);
    try {
      return await deps.call(target, peerMethodName(method), forwardedParams(p, caller.client));
    } catch (err) {
      if (attempt < 2 && ranNothing(err)) continue;
      // A peer that still takes nothing (no core open, refused): the client retries, as for any UNAVAILABLE.
      throw err instanceof PeerRefusedError ? new SwitchboardError("UNAVAILABLE", err.message, { cause: err }) : err;
    }
  }
}
