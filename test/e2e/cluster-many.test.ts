// `cluster.owners: "many"` (docs/scale-out.md "N owners", step 7, being built): real gateway
// processes on one PostgreSQL schema, each holding a share of the 256 partitions and opening its
// core for them alone; the holder of the writer lease is the global holder and serves the clients.
// Turns across gateways come with the `forward` task: a test of them adds a rule to SB_PLAY and a
// `chat.send` through the global holder into a session of the other gateway's partitions.
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { readClusterStatus } from "../../src/cluster/cluster-status.js";
import { partOf } from "../../src/routing/partition.js";
import { type FakeTelegramServer, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { type Cluster, type ClusterGateway, useCluster } from "../support/cluster-harness.js";
import { holdingLines, partitionsByNode } from "../support/cluster-many.js";
import { callChild, until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
const startCluster = useCluster(db);
const fakes: FakeTelegramServer[] = [];
const pools: pg.Pool[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});
afterAll(async () => {
  for (const pool of pools.splice(0)) await pool.end();
});

const TIMING = { leaseTtlMs: 6_000, heartbeatMs: 500 };

/** `size` gateways of `cluster.owners: "many"`, logging at info (their "holding partitions" lines). */
async function manyGateways(size: number): Promise<Cluster> {
  const fake = await startFakeTelegramServer();
  fakes.push(fake);
  return startCluster({
    size,
    cluster: { ...TIMING, owners: "many" },
    env: { SB_API_ROOT: fake.apiRoot, SB_LOG_LEVEL: "info" },
  });
}

/** Waits until every partition is held and `gateways` hold at most ceil(256 / n) each; returns the split. */
async function splitBetween(cluster: Cluster, gateways: ClusterGateway[], timeoutMs = 30_000) {
  const share = Math.ceil(256 / gateways.length);
  let last = new Map<string, number[]>();
  await until(async () => {
    last = await partitionsByNode(cluster);
    const counts = gateways.map((g) => last.get(g.name)?.length ?? 0);
    return (
      counts.reduce((a, b) => a + b, 0) === 256 &&
      counts.every((n) => n > 0 && n <= share) &&
      last.size === gateways.length
    );
  }, timeoutMs).catch(() => {
    for (const g of gateways) console.log(g.name, g.stderr().slice(-6000));
    throw new Error(`partitions not split: ${JSON.stringify([...last].map(([node, parts]) => [node, parts.length]))}`);
  });
  return last;
}

/** A session key of `main` whose partition is in `parts`. */
function keyIn(parts: readonly number[], name: string): string {
  for (let i = 0; ; i++) {
    const key = `agent:main:webchat:dm:${name}-${i}`;
    if (parts.includes(partOf(key))) return key;
  }
}

/** A pool on the cluster's schema (the status reader's `search_path`). */
function schemaPool(cluster: Cluster): pg.Pool {
  const pool = new pg.Pool({ connectionString: db.url, max: 1, options: `-c search_path=${cluster.schema}` });
  pool.on("error", () => undefined);
  pools.push(pool);
  return pool;
}

describe('cluster.owners: "many"', () => {
  it("splits the partitions between two gateways; the first opened the global core at once, serves clients and its cluster.status shows both with their counts", async () => {
    const cluster = await manyGateways(2);
    const [first, second] = cluster.gateways as [ClusterGateway, ClusterGateway];
    const parts = await splitBetween(cluster, [first, second]);
    expect([parts.get("gw-1")!.length, parts.get("gw-2")!.length]).toEqual([128, 128]);
    // Both cores open on their half (the leases move before the cores reopen).
    await until(() => holdingLines(first).at(-1)?.count === 128 && holdingLines(second).at(-1)?.count === 128);
    expect(await cluster.leaseHolder("schema:writer")).toBe("gw-1");
    // The channel account is the global holder's alone (a partition core starts no adapter).
    expect(await cluster.query("SELECT name FROM cluster_leases WHERE starts_with(name, 'account:')")).toEqual([
      { name: "account:telegram:default" },
    ]);
    expect(await cluster.leaseHolder("account:telegram:default")).toBe("gw-1");
    const status = await callChild<{ members: Array<{ nodeId: string; role: string; partitions: number }> }>(
      { url: `ws://127.0.0.1:${first.port}` } as never,
      "cluster.status",
      {},
    );
    expect(status.members.map((m) => [m.nodeId, m.role, m.partitions])).toEqual([
      ["gw-1", "owner", 128],
      ["gw-2", "standby", 128],
    ]);
    // The second gateway's front relays its clients to the global holder.
    const relayed = await callChild<{ members: unknown[] }>(
      { url: `ws://127.0.0.1:${second.port}` } as never,
      "cluster.status",
      {},
    );
    expect(relayed.members).toHaveLength(2);
    // A cold start opened the global core at once (no partition core first), then reopened for half.
    expect(holdingLines(first).map((line) => [line.count, line.global])).toEqual([
      [256, true],
      [128, true],
    ]);
    expect(holdingLines(second).at(-1)).toMatchObject({ count: 128, global: false });
  }, 60_000);

  it("a third gateway joining rebalances: all three hold a share, the first two move the given-up partitions out of their running cores (no reopen), and each image holds only its own partitions' sessions", async () => {
    const cluster = await manyGateways(2);
    const [first, second] = cluster.gateways as [ClusterGateway, ClusterGateway];
    const two = await splitBetween(cluster, [first, second]);
    // Partitions each keeps after the third joins (extras with no work are given up highest first).
    const share = Math.ceil(256 / 3);
    const kept = (node: string) => two.get(node)!.slice(0, share);
    const given = (node: string) => two.get(node)!.slice(share);
    const keys = { ones: keyIn(kept("gw-1"), "one"), twos: keyIn(kept("gw-2"), "two") };
    const moved = [keyIn(given("gw-1"), "moved-one"), keyIn(given("gw-2"), "moved-two")];
    // Each session made through the global holder (a write of another gateway's session is forwarded there).
    for (const key of [keys.ones, keys.twos, ...moved])
      await callChild({ url: `ws://127.0.0.1:${first.port}` } as never, "sessions.patch", { key, label: key });
    const before = await readClusterStatus(schemaPool(cluster), { keys: true });
    expect(before.members.map((m) => m.sessionsOwned)).toEqual([2, 2]);
    const opens = [first, second].map((g) => holdingLines(g).filter((l) => l.change === "opened").length);
    const third = await cluster.add();
    const three = await splitBetween(cluster, [first, second, third]);
    expect([...three.values()].flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 256 }, (_, n) => n));
    const settled = (g: ClusterGateway) => holdingLines(g).at(-1)?.count === three.get(g.name)!.length;
    await until(() => [first, second, third].every(settled));
    // The first two evicted their extras from the running core: no core opened again; the moved sessions left their images.
    expect([first, second].map((g) => holdingLines(g).filter((l) => l.change === "opened").length)).toEqual(opens);
    expect([first, second].map((g) => holdingLines(g).at(-1)?.change)).toEqual(["evicted", "evicted"]);
    expect([first, second, third].map((g) => holdingLines(g).at(-1)?.sessions)).toEqual([1, 1, 2]);
    const status = await readClusterStatus(schemaPool(cluster), { keys: true });
    expect(status.members.map((m) => [m.nodeId, m.partitions, m.sessionsOwned, m.sessionKeys])).toEqual([
      ["gw-1", three.get("gw-1")!.length, 1, [keys.ones]],
      ["gw-2", three.get("gw-2")!.length, 1, [keys.twos]],
      ["gw-3", three.get("gw-3")!.length, 2, [...moved].sort()],
    ]);
  }, 90_000);

  it("a SIGKILLed gateway's partitions are taken by the others before its leases expire; the global holder's by the next global holder", async () => {
    const cluster = await manyGateways(3);
    const [first, second, third] = cluster.gateways as [ClusterGateway, ClusterGateway, ClusterGateway];
    await splitBetween(cluster, [first, second, third]);
    const killedAt = Date.now();
    await cluster.kill(third);
    await splitBetween(cluster, [first, second], TIMING.leaseTtlMs);
    const retaken = Date.now() - killedAt;
    // The global holder goes: the second takes the writer lease and every partition, and serves clients.
    const globalKilledAt = Date.now();
    await cluster.kill(first);
    await until(async () => (await partitionsByNode(cluster)).get("gw-2")?.length === 256, TIMING.leaseTtlMs);
    await until(() => second.role() === "owner");
    // Its core reopened for every partition (clients are answered 503 / 1013 while it reopens).
    await until(() => holdingLines(second).at(-1)?.count === 256);
    const status = await callChild<{ members: Array<{ nodeId: string; role: string; partitions: number }> }>(
      { url: `ws://127.0.0.1:${second.port}` } as never,
      "cluster.status",
      {},
    );
    expect(status.members.find((m) => m.nodeId === "gw-2")).toMatchObject({ role: "owner", partitions: 256 });
    expect(holdingLines(second).at(-1)).toMatchObject({ count: 256, global: true });
    console.log(
      `partitions of a killed member retaken in ${retaken} ms; the global holder's in ${Date.now() - globalKilledAt} ms`,
    );
  });

  it("a member stopped with SIGTERM exits 0 and leaves: no member row is left and the other gateway takes its partitions", async () => {
    const cluster = await manyGateways(2);
    const [first, second] = cluster.gateways as [ClusterGateway, ClusterGateway];
    await splitBetween(cluster, [first, second]);
    second.process.kill("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(await cluster.query("SELECT node_id FROM cluster_members ORDER BY node_id")).toEqual([{ node_id: "gw-1" }]);
    await until(async () => (await partitionsByNode(cluster)).get("gw-1")?.length === 256);
    await until(() => holdingLines(first).at(-1)?.count === 256);
    expect(holdingLines(first).at(-1)).toMatchObject({ global: true });
  }, 60_000);
});
