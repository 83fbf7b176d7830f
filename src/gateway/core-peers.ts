// What the cores of a gateway with `cluster.owners: "many"` reach other gateways' cores with
// (docs/scale-out.md "N owners"): the process's one peer call (src/cluster/peer-call.ts), aimed at
// the holder of the writer lease (the global holder, which holds every channel account), and the
// process's one table of peer handlers (./peer-handlers.ts) that its own cores register in.
import { type PeerCall, PeerRefusedError, type PeerTarget } from "../cluster/peer-call.js";
import { SwitchboardError } from "../errors.js";
import type { PeerHandlers } from "./peer-handlers.js";

/** What a core lends its adapters (`AdapterStartContext.callHolder` and `servePeers`). */
export interface CorePeers {
  /** runs `name` on the global holder's core; rejects UNAVAILABLE when no other gateway holds the writer lease or it cannot be reached */
  callHolder(name: string, params: unknown): Promise<unknown>;
  handlers: PeerHandlers;
}

/**
 * The peers of a member. The writer lease's holder is read from the database once and kept: a call
 * it ran nothing for (a `PeerRefusedError`: gone, not that node, no handler since its core reopened
 * as a partition core) reads the holder again and is sent once more there; any other failure is
 * the caller's (it retries). So a send costs no database read while the holder stays.
 */
export function corePeers(deps: {
  /** the other gateway holding the writer lease, as the cluster reads it; undefined: none, or this one */
  holder(): Promise<PeerTarget | undefined>;
  /** whether this gateway holds the writer lease: a call then runs on its own global core's handler, not through HTTP */
  self?(): boolean;
  call: PeerCall;
  handlers: PeerHandlers;
}): CorePeers {
  let known: PeerTarget | undefined;
  const holder = async () => {
    known ??= await deps.holder();
    if (!known) throw new SwitchboardError("UNAVAILABLE", "no other gateway holds the schema's writer lease now");
    return known;
  };
  const send = async (name: string, params: unknown) => {
    try {
      return await deps.call(await holder(), name, params);
    } catch (err) {
      if (err instanceof PeerRefusedError) known = undefined;
      throw err;
    }
  };
  return {
    async callHolder(name, params) {
      // This gateway is the global holder, its global core beside this partition core (./many-cores.ts).
      const local = deps.self?.() ? deps.handlers.get(name) : undefined;
      if (local) return local(params);
      try {
        return await send(name, params);
      } catch (err) {
        if (!(err instanceof PeerRefusedError)) throw err;
        return send(name, params);
      }
    },
    handlers: deps.handlers,
  };
}
