// A partition member's front (`cluster.owners: "many"`): its standby front relays clients to the
// global holder, but a peer call (`POST /cluster/call`, ./peer-route.ts) is answered here, from this
// gateway's own core, never relayed on (docs/scale-out.md "The peer call").
import { cachedSecret } from "./owner-relay.js";
import type { PeerHandlers } from "./peer-handlers.js";
import { createPeerLimiter, isPeerCall, servePeerCall } from "./peer-route.js";
import type { StandbyFrontFactory } from "./standby-front.js";

/** `inner`'s front, with peer calls answered from `peer.handlers` as gateway `peer.nodeId()`. */
export function withPeerCalls(
  inner: StandbyFrontFactory,
  peer: { handlers: PeerHandlers; nodeId(): string },
): StandbyFrontFactory {
  return (context) => {
    const front = inner(context);
    const deps = {
      ...peer,
      relaySecret: cachedSecret(context),
      guard: context.edge.guard,
      limiter: createPeerLimiter(),
      logger: context.logger,
    };
    return {
      handleHttp: (req, res) => (isPeerCall(req) ? servePeerCall(req, res, deps) : front.handleHttp(req, res)),
      handleUpgrade: (req, socket, head) => front.handleUpgrade(req, socket, head),
      close: () => front.close(),
    };
  };
}
