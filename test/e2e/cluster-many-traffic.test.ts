// `cluster.owners: "many"` under traffic (docs/scale-out.md "N owners"): three real gateway
// processes on one PostgreSQL schema, each running the turns of its share of the partitions. The
// global holder polls the bot (the real Telegram adapter on the fake Bot API) and forwards each
// message to its session's owner; webhooks POSTed to any gateway reach the owner the same way; each
// owner sends its sessions' replies itself (send-only adapters), claiming each chat's send lane.
import { afterEach, describe, expect, it } from "vitest";
import { type FakeTelegramServer, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { type Cluster, useCluster } from "../support/cluster-harness.js";
import { chatsAnswered, chatsOutcome, postHookTurns, pushChats } from "../support/cluster-traffic.js";
import { settledSplit } from "../support/cluster-many.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
const startCluster = useCluster(db);
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

const HOOK_TOKEN = "cluster-hook-token-0123456789";
const CLUSTER = { leaseTtlMs: 5_000, heartbeatMs: 500, owners: "many" as const };

/** Three gateways of `cluster.owners: "many"` with the fake's bot open to every DM, a session per chat. */
async function manyCluster(fake: FakeTelegramServer, size = 3): Promise<Cluster> {
  return startCluster({
    size,
    cluster: CLUSTER,
    env: {
      SB_API_ROOT: fake.apiRoot,
      SB_TELEGRAM: JSON.stringify({ dmPolicy: "open" }),
      SB_HOOK_TOKEN: HOOK_TOKEN,
      SB_LOG_LEVEL: "info",
    },
    config: {
      hooks: { allowRequestSessionKey: true },
      session: { dmScope: "per-channel-peer", queue: { cap: 1000, debounceMs: 0 } },
    },
  });
}

/** The gateways (node ids) that claimed the send lanes of the chats: who sent their replies. */
async function senders(cluster: Cluster): Promise<Map<string, number>> {
  const rows = await cluster.query<{ node_id: string; n: string }>(
    `SELECT m.node_id, count(*) AS n FROM outbox_lanes o JOIN cluster_members m ON m.incarnation = o.holder
      GROUP BY m.node_id ORDER BY m.node_id`,
  );
  return new Map(rows.map((row) => [row.node_id, Number(row.n)]));
}

describe('cluster.owners: "many" under traffic', () => {
  it("answers 300 Telegram DMs in 30 chats and webhook turns POSTed to all three, each chat's turns run and answered by its partition's owner: every reply once and in order, never two pollers", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const cluster = await manyCluster(fake);
    await settledSplit(cluster);
    const began = Date.now();
    const dms = pushChats(fake, 30, 10);
    const ports = cluster.gateways.map((g) => g.port);
    const hooks = await postHookTurns(ports, HOOK_TOKEN, { chats: 3, perChat: 10, firstChat: 2001 });
    expect(hooks.answers.filter((a) => a.status !== 202)).toEqual([]);
    await until(() => chatsAnswered(fake, dms) && chatsAnswered(fake, hooks.traffic), 120_000);
    const tookMs = Date.now() - began;
    await fake.flush();
    for (const traffic of [dms, hooks.traffic])
      expect(chatsOutcome(fake, traffic)).toEqual({ missing: [], repeated: [], outOfOrder: [], misrouted: [] });
    expect(fake.conflicts()).toBe(0);
    // Replies went out from all three gateways: each claimed the send lanes of its own sessions' chats.
    const sent = await senders(cluster);
    expect([...sent.keys()]).toEqual(["gw-1", "gw-2", "gw-3"]);
    expect([...sent.values()].reduce((a, b) => a + b, 0)).toBe(33);
    process.stderr.write(
      `many owners: 330 turns answered in ${tookMs} ms; send lanes per gateway ${JSON.stringify([...sent])}\n`,
    );
  }, 180_000);

  it("loses nothing when a gateway running busy sessions (not the global holder) is SIGKILLed mid-burst: its partitions' sessions are answered by the others", async () => {
    // Each reply is shown to the user at once and answered 40 ms later: a kill can fall in that window.
    const fake = await startFakeTelegramServer({ sendDelayMs: 40 });
    fakes.push(fake);
    const cluster = await manyCluster(fake);
    await settledSplit(cluster);
    const victim = cluster.gateways.find((g) => g.role() === "standby")!;
    const burst = pushChats(fake, 12, 10);
    await until(() => fake.sent.length >= 30, 60_000);
    const killedAt = Date.now();
    await cluster.kill(victim);
    // More of each chat right after the kill: the global holder polls them while the dead member's
    // partitions change hands, and each chat's new messages must still follow those forwarded before.
    const dms = pushChats(fake, 12, 5, 1001, burst);
    await until(() => chatsAnswered(fake, dms), 60_000);
    const answeredMs = Date.now() - killedAt;
    await fake.flush();
    const { missing, repeated, outOfOrder, misrouted } = chatsOutcome(fake, dms);
    expect({ missing, outOfOrder, misrouted }).toEqual({ missing: [], outOfOrder: [], misrouted: [] });
    // Telegram cannot deduplicate: a chunk in flight at the kill may arrive twice, at most one per chat lane.
    expect(repeated.every(([, n]) => n === 2)).toBe(true);
    expect(repeated.length).toBeLessThanOrEqual(12);
    // The survivors hold every partition; the dead member holds none.
    const held = await cluster.query<{ node_id: string }>(
      `SELECT DISTINCT m.node_id FROM cluster_leases l JOIN cluster_members m ON m.incarnation = l.owner
        WHERE starts_with(l.name, 'partition:') AND l.expires_at > now() AND cluster_node_alive(l.owner) ORDER BY 1`,
    );
    expect(held.map((row) => row.node_id)).not.toContain(victim.name);
    expect(fake.conflicts()).toBe(0);
    process.stderr.write(
      `many owners SIGKILL of ${victim.name}: every chat answered ${answeredMs} ms after the kill; ${repeated.length} reply repeated\n`,
    );
  }, 120_000);

  it("loses nothing when the global holder (polling the bot) is SIGKILLed mid-burst: another becomes the global holder and polls again within leaseTtlMs + 5 s", async () => {
    const fake = await startFakeTelegramServer({ sendDelayMs: 40 });
    fakes.push(fake);
    const cluster = await manyCluster(fake);
    await settledSplit(cluster);
    const global = await cluster.owner();
    const burst = pushChats(fake, 12, 10);
    await until(() => fake.sent.length >= 30, 60_000);
    const killedAt = Date.now();
    await cluster.kill(global);
    const dms = pushChats(fake, 12, 5, 1001, burst);
    const next = await cluster.owner({ not: global });
    // A poll is recorded as it arrives: one recorded after the kill was sent by the new global holder.
    const polledAfter = () => fake.calls.find((c) => c.method === "getUpdates" && c.at > killedAt);
    await until(() => polledAfter() !== undefined, 60_000);
    const polledAgainMs = polledAfter()!.at - killedAt;
    expect(polledAgainMs).toBeLessThan(CLUSTER.leaseTtlMs + 5_000);
    await until(() => chatsAnswered(fake, dms), 60_000);
    await fake.flush();
    const { missing, repeated, outOfOrder, misrouted } = chatsOutcome(fake, dms);
    expect({ missing, outOfOrder, misrouted }).toEqual({ missing: [], outOfOrder: [], misrouted: [] });
    expect(repeated.every(([, n]) => n === 2)).toBe(true);
    expect(repeated.length).toBeLessThanOrEqual(12);
    expect(fake.conflicts()).toBe(0);
    process.stderr.write(
      `many owners SIGKILL of the global holder: ${next.name} polled the bot ${polledAgainMs} ms after the kill; ${repeated.length} reply repeated\n`,
    );
  }, 120_000);
});
