// The global holder SIGKILLed while another member's long turns run (docs/scale-out.md "N owners",
// step 8): that member becomes the global holder by opening the global core BESIDE its partition
// core, so its own turns run on untouched (the model asked once, one reply each), the killed
// holder's turns run again once on it, and a DM into the killed holder's sessions is answered
// (polled by the new global core, handed to its partition core).
import { describe, expect, it } from "vitest";
import type { ClusterGateway } from "../support/cluster-harness.js";
import { useClusterClients } from "../support/cluster-clients.js";
import { chatsOn, manyGateways, onceOn } from "../support/cluster-adopt.js";
import { holdingLines, settledSplit } from "../support/cluster-many.js";

const clients = useClusterClients();

describe('cluster.owners: "many": a member becoming the global holder', () => {
  it("opens the global core beside its partition core: the global holder's SIGKILL cuts none of its long turns", async () => {
    const { cluster, callsOf, startSlow, ping, finishSlow, sentTo } = await manyGateways(clients, 2);
    const split = await settledSplit(cluster);
    const killed = await cluster.owner();
    const heir = cluster.gateways.find((g) => g !== killed) as ClusterGateway;
    const own = chatsOn(split, heir, 2);
    const orphaned = chatsOn(split, killed, 2);
    await startSlow([...own, ...orphaned]);
    const mark = holdingLines(heir).length;
    const killedAt = Date.now();
    await cluster.kill(killed);
    // A DM into a session of the killed holder's partitions: the new global holder polls and answers it.
    await ping(chatsOn(split, killed, 1, orphaned)[0]!);
    const answeredMs = Date.now() - killedAt;
    await finishSlow([...own, ...orphaned]);
    for (const c of [...own, ...orphaned]) expect(sentTo(c), `chat ${c}`).toEqual([`done ${c}`]);
    // Its own turns ran once, where they started; the killed holder's once there and once more on it.
    for (const c of own) expect(await callsOf(`slow work ${c}`), `chat ${c}`).toEqual(onceOn(cluster, heir));
    for (const c of orphaned)
      expect(await callsOf(`slow work ${c}`), `chat ${c}`).toEqual({ [killed.name]: 1, [heir.name]: 1 });
    // One core opened (the global core, beside), the dead holder's partitions adopted; no turn cut.
    const after = holdingLines(heir).slice(mark);
    expect(after.filter((l) => l.change === "opened")).toHaveLength(1);
    expect(after.every((l) => l.change !== "evicted" && !l.cut)).toBe(true);
    expect(after.some((l) => l.change === "adopted")).toBe(true);
    expect(after.at(-1)?.count).toBe(256);
    process.stderr.write(
      `many owners promote: global holder ${killed.name} SIGKILLed; ${heir.name} answered a DM of its sessions ${answeredMs} ms later; ${JSON.stringify(after.map((l) => [l.change, l.count, l.ms]))}\n`,
    );
  }, 120_000);
});
