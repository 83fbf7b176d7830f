// One view across N owners (docs/scale-out.md "N owners", issue #28 "One view"): three real gateway
// processes in `cluster.owners: "many"`. A client connected to a gateway that is not the global
// holder (relayed to it) sends into a session a third gateway owns: the turn runs on that owner and
// the client sees its events once (bridged over NOTIFY); reads from any gateway show it.
import { describe, expect, it } from "vitest";
import type { GatewayClient } from "../../src/cli/gateway-client.js";
import { partOf } from "../../src/routing/partition.js";
import type { Cluster, ClusterGateway } from "../support/cluster-harness.js";
import { useClusterClients } from "../support/cluster-clients.js";
import { settledSplit } from "../support/cluster-many.js";
import { until } from "../support/gateway-child.js";

const { startCluster, fakeTelegram, client } = useClusterClients();
const CLUSTER = { leaseTtlMs: 5_000, heartbeatMs: 500, owners: "many" as const };

/** Three "many" gateways: the global holder, a relaying gateway and a third one; the split settled. */
async function threeOwners(env: Record<string, string> = {}) {
  const fake = await fakeTelegram();
  const cluster = await startCluster({
    size: 3,
    cluster: CLUSTER,
    env: { SB_API_ROOT: fake.apiRoot, SB_LOG_LEVEL: "info", ...env },
  });
  const split = await settledSplit(cluster);
  const global = await cluster.owner();
  const [relaying, third] = cluster.gateways.filter((g) => g !== global) as [ClusterGateway, ClusterGateway];
  return { fake, cluster, split, global, relaying, third };
}

/** A webchat session key whose partition `holder` holds in `split`. */
function sessionOn(split: Map<string, number[]>, holder: ClusterGateway, name: string): string {
  const held = new Set(split.get(holder.name));
  for (let i = 0; ; i++) {
    const key = `agent:main:webchat:dm:${name}-${i}`;
    if (held.has(partOf(key))) return key;
  }
}

type Event = {
  event: string;
  payload: { sessionKey?: string; runId?: string; state?: string; kind?: string; text?: string };
};

/** Every event `on` receives, in order. */
function recorded(on: GatewayClient): Event[] {
  const events: Event[] = [];
  on.onEvent((event, payload) => events.push({ event, payload: payload as Event["payload"] }));
  return events;
}

/** The node ids of the live holder of `sessionKey`'s partition lease: the one gateway that can run its turns. */
async function holderOf(cluster: Cluster, sessionKey: string): Promise<string[]> {
  const rows = await cluster.query<{ node_id: string }>(
    `SELECT DISTINCT m.node_id FROM cluster_leases l JOIN cluster_members m ON m.incarnation = l.owner
      WHERE l.name = $1 AND l.expires_at > now() AND cluster_node_alive(l.owner)`,
    [`partition:${partOf(sessionKey)}`],
  );
  return rows.map((r) => r.node_id);
}

describe('cluster.owners: "many": one view', () => {
  it("a client of a relaying gateway sends into a session a third gateway owns: the turn runs there, its events reach the client once, and reads on every gateway show it", async () => {
    const { cluster, split, relaying, third } = await threeOwners();
    const key = sessionOn(split, third, "xs");
    expect(await holderOf(cluster, key)).toEqual([third.name]);
    const onRelaying = await client(relaying.port);
    const events = recorded(onRelaying);
    await onRelaying.call("subscribe", { sessionKeys: [key] });
    const sent = await onRelaying.call<{ status: string; runId: string }>("chat.send", {
      sessionKey: key,
      message: "across three",
      idempotencyKey: "xs-1",
    });
    expect(sent).toMatchObject({ status: "started", runId: "xs-1" });
    // A second turn after it, on the same session: its final arrives after every event of the first.
    await until(() => events.some((e) => e.event === "chat" && e.payload.state === "final"), 30_000);
    await onRelaying.call("chat.send", { sessionKey: key, message: "the marker", idempotencyKey: "xs-2" });
    await until(() => events.some((e) => e.payload.runId === "xs-2" && e.payload.state === "final"), 30_000);
    const first = events.filter(
      (e) => e.payload.sessionKey === key && e.payload.runId !== "xs-2" && !e.payload.text?.includes("marker"),
    );
    const replies = first.filter((e) => e.event === "chat.delivery" && e.payload.kind === "reply");
    expect(replies.map((e) => e.payload.text)).toEqual(["Echo: across three"]);
    const finals = first.filter((e) => e.event === "chat" && e.payload.state === "final");
    expect(finals.map((e) => e.payload.runId)).toEqual(["xs-1"]);
    // Run once (one prompt stored), by the partition's holder: the third gateway.
    const [user] = await cluster.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM transcript_events WHERE message->>'role' = 'user' AND strpos(message::text, 'across three') > 0",
    );
    expect(user!.n).toBe(1);
    expect(await holderOf(cluster, key)).toEqual([third.name]);
    for (const gateway of cluster.gateways) {
      const on = await client(gateway.port);
      const history = await on.call<{ messages: Array<{ role: string }> }>("chat.history", { sessionKey: key });
      expect(JSON.stringify(history.messages)).toContain("Echo: across three");
      const listed = await on.call<{ sessions: Array<{ key: string }> }>("sessions.list", {});
      expect(listed.sessions.map((s) => s.key)).toContain(key);
    }
  }, 120_000);
});
