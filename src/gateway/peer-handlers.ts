// What a gateway answers peer calls with (docs/scale-out.md "The peer call"): a handler per name,
// set by a core when it opens and removed when it stops. One registry per process (start-many).

/** Runs one peer call's params on this gateway's core; a SwitchboardError travels back to the caller. */
export type PeerHandler = (params: unknown) => Promise<unknown>;

/** name -> handler; a core registers its handlers when it opens, removes them when it stops */
export interface PeerHandlers {
  set(name: string, handler: PeerHandler): () => void; // returns the removal
  get(name: string): PeerHandler | undefined;
}

/** An empty registry. A second `set` of a name replaces the first; a removal removes only the handler it set. */
export function createPeerHandlers(): PeerHandlers {
  const byName = new Map<string, PeerHandler>();
  return {
    set(name, handler) {
      byName.set(name, handler);
      return () => {
        if (byName.get(name) === handler) byName.delete(name);
      };
    },
    get: (name) => byName.get(name),
  };
}
