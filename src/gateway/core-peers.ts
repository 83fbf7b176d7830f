// What the cores of a gateway with `cluster.owners: "many"` reach other gateways' cores with
// (docs/scale-out.md "N owners"): the process's one peer call (src/cluster/peer-call.ts), aimed at
// the holder of the writer lease (the global holder, which holds every channel account), and the
// process's one table of peer handlers (./peer-handlers.ts) that its own cores register in.
import type { PeerCall, PeerTarget } from "../cluster/peer-call.js";
import { SwitchboardError } from "../errors.js";
import type { PeerHandlers } from "./peer-handlers.js";

/** What a core lends its adapters (`AdapterStartContext.callHolder` and `servePeers`). */
export interface CorePeers {
  /** runs `name` on the global holder's core; rejects UNAVAILABLE when no other gateway holds the writer lease or it cannot be reached */
  callHolder(name: string, params: unknown): Promise<unknown>;
  handlers: PeerHandlers;
}

/**
 * The peers of a member: each call reads the writer lease's holder from the database first (a
 * holder that changed is called at its new address; a dead one's call fails, and the caller retries).
 */
export function corePeers(deps: {
  /** the other gateway holding the writer lease, as the cluster reads it; undefined: none, or this one */
  holder(): Promise<PeerTarget | undefined>;
  call: PeerCall;
  handlers: PeerHandlers;
}): CorePeers {
  return {
    async callHolder(name, params) {
      const holder = await deps.holder();
      if (!holder) throw new SwitchboardError("UNAVAILABLE", "no other gateway holds the schema's writer lease now");
      return deps.call(holder, name, params);
    },
    handlers: deps.handlers,
  };
}
