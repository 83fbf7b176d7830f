// Partitions adopted and evicted one by one (docs/scale-out.md "N owners", step 8): real gateway
// processes in `cluster.owners: "many"`. A member's share grows (a peer SIGKILLed) or shrinks (a
// peer joins) while turns of its own sessions run: they end normally, once each, the model asked
// once per step (no cut, no replay), and the member's "holding partitions" line says "adopted" or
// "evicted", not "opened". Each slow turn and child waits on a gate the test opens only once the rebalance
// settled, so a core reopened on the way (which drains for at most 10 s, then cuts) cuts it.
import { describe, expect, it } from "vitest";
import { partOf } from "../../src/routing/partition.js";
import type { ClusterGateway } from "../support/cluster-harness.js";
import { useClusterClients } from "../support/cluster-clients.js";
import {
  SPAWNS,
  chatsIn,
  chatsOn,
  expectChanges,
  manyGateways as gateways,
  onceOn,
  victimOf,
} from "../support/cluster-adopt.js";
import { holdingLines, settledSplit } from "../support/cluster-many.js";
import { until } from "../support/gateway-child.js";

const clients = useClusterClients();
const { servingClient } = clients;
const manyGateways = (size: number) => gateways(clients, size);

describe('cluster.owners: "many": partitions adopted and evicted one by one', () => {
  it("a peer's SIGKILL cuts no long run of a survivor; the killed gateway's turns run again once on a survivor, its sub-agents are announced interrupted once, and a survivor answers its sessions", async () => {
    const { cluster, callsOf, startSlow, ping, finishSlow, sentTo, startChildren, announcesTo, flush } =
      await manyGateways(3);
    const split = await settledSplit(cluster);
    /** The gateway holding session `key`'s partition. */
    const holderOf = (key: string) => cluster.gateways.find((g) => split.get(g.name)!.includes(partOf(key)))!;
    const slowOn = new Map(cluster.gateways.map((g) => [g, chatsOn(split, g, 2)]));
    const slow = [...slowOn.values()].flat();
    await startSlow(slow);
    const children = await startChildren();
    const { global, victim, survivors, childrenThere } = await victimOf(cluster, (c) => holderOf(children.get(c)!));
    const pinged = chatsOn(split, victim, 1, slow)[0]!;
    const marks = survivors.map((g) => holdingLines(g).length);
    const killedAt = Date.now();
    await cluster.kill(victim);
    // A DM into a session of the killed gateway's partitions: a survivor answers it.
    await ping(pinged);
    const answeredMs = Date.now() - killedAt;
    await settledSplit(cluster, survivors);
    const settledMs = Date.now() - killedAt;
    await finishSlow(slow);
    await until(() => SPAWNS.every((c) => announcesTo(c).length > 0), 30_000);
    for (const c of slow) expect(sentTo(c), `chat ${c}`).toEqual([`done ${c}`]);
    // The survivors' turns ran once, where they started: not cut, not replayed.
    for (const g of survivors)
      for (const c of slowOn.get(g)!) expect(await callsOf(`slow work ${c}`), `chat ${c}`).toEqual(onceOn(cluster, g));
    // The killed gateway's turns: started there, run again once by a survivor, answered once (as before).
    for (const c of slowOn.get(victim)!) {
      const { [victim.name]: there, ...elsewhere } = await callsOf(`slow work ${c}`);
      expect([there, Object.values(elsewhere).reduce((a, b) => a + b)], `chat ${c}`).toEqual([1, 1]);
    }
    // Every child ran once; a survivor's ended normally, the killed gateway's is announced interrupted; once each.
    await global.idle();
    await flush();
    for (const c of SPAWNS) {
      const on = holderOf(children.get(c)!);
      expect(await callsOf(`dig into topic ${c}`), `chat ${c}`).toEqual(onceOn(cluster, on));
      expect(announcesTo(c), `chat ${c}`).toHaveLength(1);
      expect(announcesTo(c)[0], `chat ${c}`).toContain(on === victim ? "Status: error" : "Status: success");
    }
    // Each survivor's core took the partitions in: "adopted" lines only, no reopen.
    const adoptMs = expectChanges(survivors, marks, "adopted");
    process.stderr.write(
      `many owners adopt: ${victim.name} SIGKILLed (global ${global.name}, ${childrenThere} of ${SPAWNS.length} children): first answer by a survivor ${answeredMs} ms after the kill, split settled at ${settledMs} ms; adopt ms ${JSON.stringify(adoptMs)}\n`,
    );
  }, 120_000);

  it("a joining gateway takes idle partitions and cuts no running turn; it holds its share and answers its sessions", async () => {
    const { cluster, callsOf, startSlow, ping, finishSlow, sentTo } = await manyGateways(2);
    const two = await settledSplit(cluster);
    const [first, second] = cluster.gateways as [ClusterGateway, ClusterGateway];
    // Turns in the partitions each would give up were they all idle (the highest): the busy ones stay.
    const highest = (g: ClusterGateway) => two.get(g.name)!.slice(Math.ceil(256 / 3));
    const slow = [...chatsIn(highest(first), 2), ...chatsIn(highest(second), 2)];
    await startSlow(slow);
    const marks = [first, second].map((g) => holdingLines(g).length);
    const joinedAt = Date.now();
    const third = await cluster.add();
    const three = await settledSplit(cluster);
    const settledMs = Date.now() - joinedAt;
    // The joiner holds its share, as cluster.status shows it.
    const client = await servingClient((await cluster.owner()).port);
    const status = await client.call<{ members: Array<{ nodeId: string; partitions: number }> }>("cluster.status", {});
    const share = status.members.find((m) => m.nodeId === third.name)?.partitions;
    expect(share).toBe(three.get(third.name)!.length);
    // At most ceil(256 / 3) each: the others keep 86, so the joiner holds 84 to 86.
    expect(share).toBeGreaterThanOrEqual(256 - 2 * Math.ceil(256 / 3));
    // A DM into one of its sessions: it answers it.
    const pinged = chatsOn(three, third, 1, slow)[0]!;
    await ping(pinged);
    expect(await callsOf(`ping ${pinged}`)).toMatchObject({ [third.name]: 1 });
    await finishSlow(slow);
    for (const c of slow) {
      expect(sentTo(c), `chat ${c}`).toEqual([`done ${c}`]);
      const holder = two.get(first.name)!.includes(partOf(`agent:main:telegram:dm:${c}`)) ? first : second;
      expect(await callsOf(`slow work ${c}`), `chat ${c}`).toEqual(onceOn(cluster, holder));
    }
    // The two members gave partitions up from their running cores: "evicted" lines only (no reopen), no turn cut.
    const evictMs = expectChanges([first, second], marks, "evicted");
    process.stderr.write(
      `many owners evict: ${third.name} joined, split settled ${settledMs} ms later; evict ms ${JSON.stringify(evictMs)}; joiner ${JSON.stringify(holdingLines(third).map((l) => [l.change, l.count, l.ms]))}\n`,
    );
  }, 120_000);
});
