// What a standby answers itself besides its probes (docs/scale-out.md "Inbound on any gateway" and
// "Reads on a standby"): hooks and platform webhooks around its front, and on a relayed WebSocket
// the owner authenticated, its reads and `chat.send`. Everything else its front relays to the owner.
import { createStandbyChatSend } from "./chat-send-handoff.js";
import type { GatewayCluster } from "./core-cluster.js";
import { type StandbyFrontFactory, servedTogether } from "./standby-front.js";
import { type StandbyHooksDeps, withStandbyHooks } from "./standby-hooks.js";
import { createStandbyReads } from "./standby-reads.js";

/** A standby's front (`inner` wrapped with its hooks and webhooks) and what it answers on relayed sockets. */
export function standbyParts(
  inner: StandbyFrontFactory,
  deps: Omit<StandbyHooksDeps, "target"> & { cluster: Pick<GatewayCluster, "joined" | "nodeId"> },
) {
  const { cluster } = deps;
  const target = { joined: cluster.joined, nodeId: cluster.nodeId };
  return {
    front: withStandbyHooks(inner, { ...deps, target }),
    reads: servedTogether(
      createStandbyReads({ ...deps, database: () => cluster.joined()?.database }),
      createStandbyChatSend({ ...deps, target }),
    ),
  };
}
