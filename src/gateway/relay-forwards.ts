// The HTTP requests a standby's relay (./owner-relay.ts) has in flight to the owner. A paused owner
// accepts connections and answers nothing, so a forward could wait forever and hold the standby's
// stop: every forward is tracked, the owner read again every heartbeat while any is in flight, and
// a forward still without an answer after the lease TTL ends with 503 once another owner holds the
// lease; `close()` ends them all (docs/scale-out.md "Relay").
import type { OwnerAddress, StandbyContext } from "./standby-front.js";

/** One forward in flight. */
export interface Forward {
  owner: OwnerAddress;
  /** whether the owner's response headers came */
  answered(): boolean;
  /** ends it: 503 to the client when nothing was answered yet, else its socket is cut */
  abort(reason: string): void;
}

/** Same gateway at the same address. */
function sameOwner(a: OwnerAddress | undefined, b: OwnerAddress): boolean {
  return a?.nodeId === b.nodeId && a.address === b.address;
}

/** The forwards in flight of one relay; `now` is injectable for tests. */
export function relayForwards(context: Pick<StandbyContext, "refreshOwner" | "timing">, now = Date.now) {
  const live = new Map<Forward, number>(); // when each began
  let timer: NodeJS.Timeout | undefined;
  const check = async () => {
    // A failed read keeps the last owner (refreshOwner): nothing is aborted on a database blip.
    const owner = await context.refreshOwner();
    for (const [forward, startedAt] of [...live])
      if (!forward.answered() && now() - startedAt >= context.timing.leaseTtlMs && !sameOwner(owner, forward.owner))
        forward.abort(`the schema's owner changed (was ${forward.owner.nodeId}); retry`);
  };
  return {
    /** Tracks `forward` until the returned function is called. */
    add(forward: Forward): () => void {
      live.set(forward, now());
      timer ??= setInterval(() => void check(), context.timing.heartbeatMs).unref();
      return () => {
        live.delete(forward);
        if (live.size > 0 || !timer) return;
        clearInterval(timer);
        timer = undefined;
      };
    },
    /** Ends every forward in flight (the standby stops or takes the schema over). */
    abortAll(reason: string): void {
      for (const forward of [...live.keys()]) forward.abort(reason);
    },
  };
}

/** The forwards of one relay. */
export type RelayForwards = ReturnType<typeof relayForwards>;
