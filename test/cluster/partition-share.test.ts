// The partition share (src/cluster/partition-share.ts) of several members in this process, each with
// a pool of its own, on a real PostgreSQL schema of 16 partitions: every partition held and each
// member within ceil(16 / live); a join makes the others give their highest extras up after their
// hook, never before; a partition taken away is reported. Real processes (SIGKILL, SIGSTOP) are in
// test/e2e/partition-share.test.ts.
import { afterEach, describe, expect, it } from "vitest";
import { type ClusterNode, joinCluster } from "../../src/cluster/cluster-node.js";
import { leaseOfPart, partitionLeases } from "../../src/cluster/cluster-status.js";
import { acquireLease } from "../../src/cluster/lease-sql.js";
import {
  type PartitionShare,
  createPartitionShare,
  extraParts,
  preferredParts,
} from "../../src/cluster/partition-share.js";
import { takeFreeLeases } from "../../src/cluster/partition-share-sql.js";
import { createMemoryLogger } from "../../src/logger.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
const COUNT = 16;
const CLUSTER = { leaseTtlMs: 1_000, heartbeatMs: 200 };

interface Member {
  node: ClusterNode;
  share: PartitionShare;
  database: PostgresDatabase;
  /** every held set reported, in order */
  changes: number[][];
  /** every beforeRelease call's partitions */
  releases: number[][];
}

const members: Member[] = [];
afterEach(async () => {
  for (const member of members.splice(0)) {
    await member.share.stop();
    await member.node.leave();
    await member.database.close();
  }
});

/** A member joined with a pool of its own; its share is created, not started. */
async function member(
  nodeId: string,
  beforeRelease: (parts: readonly number[]) => Promise<void> = async () => {},
  cluster = CLUSTER,
): Promise<Member> {
  const logger = createMemoryLogger();
  const database = await openPostgresDatabase({ url: db.url, schema: db.schema, logger, probeEveryMs: 0 });
  const node = await joinCluster({
    pool: database.pool,
    schema: db.schema,
    member: { nodeId, host: "h", pid: 1, port: 0 },
    cluster,
    logger,
    onLost: () => {},
  });
  const changes: number[][] = [];
  const releases: number[][] = [];
  const share = createPartitionShare({
    node,
    pool: database.pool,
    count: COUNT,
    ...cluster,
    logger,
    beforeRelease: (parts) => {
      releases.push([...parts]);
      return beforeRelease(parts);
    },
    onChange: async (held) => {
      changes.push([...held].sort((a, b) => a - b));
    },
  });
  const joined = { node, share, database, changes, releases };
  members.push(joined);
  return joined;
}

/** The current lease rows of the partitions: partition -> holder incarnation. */
async function holders(): Promise<Map<number, string>> {
  const { rows } = await members[0]!.database.pool.query<{ name: string; owner: string }>(
    "SELECT name, owner FROM cluster_leases WHERE name = ANY($1) AND expires_at > now()",
    [partitionLeases(COUNT)],
  );
  return new Map(rows.map((row) => [Number(row.name.split(":")[1]), row.owner]));
}

/** Every partition held, each by one member within `share`, and each member's view matching the lease rows. */
async function balanced(group: Member[], share: number): Promise<boolean> {
  const sets = group.map((m) => m.share.held());
  if (sets.some((set) => set.size > share)) return false;
  if (sets.reduce((sum, set) => sum + set.size, 0) !== COUNT) return false;
  const rows = await holders();
  return (
    group.every((m) => [...m.share.held()].every((n) => rows.get(n) === m.node.incarnation)) && rows.size === COUNT
  );
}

describe("the partition share", () => {
  it("orders a member's preference from its slice round the ring, and gives back its highest partitions first", () => {
    expect(preferredParts(8, 0, 3)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(preferredParts(8, 2, 3)).toEqual([6, 7, 0, 1, 2, 3, 4, 5]);
    expect(extraParts(new Set([3, 9, 1, 12]), 2)).toEqual([12, 9]);
    expect(extraParts(new Set([3, 9]), 2)).toEqual([]);
  });

  it("gives back the partitions with no work on the gateway first, the highest first among them, and busy ones only when it must", () => {
    const held = new Set([3, 9, 1, 12, 5]);
    expect(extraParts(held, 3, new Set([12, 9]))).toEqual([5, 3]);
    expect(extraParts(held, 1, new Set([12, 9]))).toEqual([5, 3, 1, 12]);
    expect(extraParts(held, 3, new Set())).toEqual([12, 9]);
  });

  it("holds every partition within a few heartbeats with three members starting at once, each at most ceil(16 / 3) = 6, none by two", async () => {
    const group = await Promise.all(["even-a", "even-b", "even-c"].map((id) => member(id)));
    const startedAt = performance.now();
    await Promise.all(group.map((m) => m.share.start()));
    await until(() => balanced(group, 6), 5_000);
    expect(performance.now() - startedAt).toBeLessThan(CLUSTER.heartbeatMs * 10);
    const all = group.flatMap((m) => [...m.share.held()]);
    expect(new Set(all).size).toBe(all.length);
    for (const m of group) expect(m.changes.at(-1)).toEqual([...m.share.held()].sort((a, b) => a - b));
  });

  it("after a join, the others give their highest extras up and the newcomer gets its share", async () => {
    const [a, b] = [await member("join-a"), await member("join-b")];
    await Promise.all([a.share.start(), b.share.start()]);
    await until(() => balanced([a, b], 8), 5_000);
    const before = { a: new Set(a.share.held()), b: new Set(b.share.held()) };
    const c = await member("join-c");
    await c.share.start();
    await until(() => balanced([a, b, c], 6), 5_000);
    expect(c.share.held().size).toBeGreaterThanOrEqual(4);
    expect(a.releases).toEqual([extraParts(before.a, 6)]);
    expect(b.releases).toEqual([extraParts(before.b, 6)]);
  });

  it("rebalances a join at once, not at the next pass: the newcomer and each give-back are announced (NOTIFY)", async () => {
    const slow = { leaseTtlMs: 30_000, heartbeatMs: 10_000 };
    const a = await member("notify-a", undefined, slow);
    const b = await member("notify-b", undefined, slow);
    await a.share.start();
    await b.share.start();
    expect([a.share.held().size, b.share.held().size]).toEqual([8, 8]);
    const c = await member("notify-c", undefined, slow);
    const joinedAt = performance.now();
    await c.share.start();
    await until(() => balanced([a, b, c], 6), slow.heartbeatMs);
    expect(performance.now() - joinedAt).toBeLessThan(slow.heartbeatMs / 4);
  });

  it("gives a cleanly leaving member's partitions to the others at once: its liveness lock goes last", async () => {
    const slow = { leaseTtlMs: 30_000, heartbeatMs: 10_000 };
    const group: Member[] = [];
    for (const id of ["leave-a", "leave-b", "leave-c"]) group.push(await member(id, undefined, slow));
    for (const m of group) await m.share.start();
    await until(() => balanced(group, 6), slow.heartbeatMs);
    const c = members.splice(members.indexOf(group[2]!), 1)[0]!;
    const leftAt = performance.now();
    await c.share.stop();
    await c.node.leave();
    await c.database.close();
    await until(() => balanced(group.slice(0, 2), 8), slow.heartbeatMs);
    expect(performance.now() - leftAt).toBeLessThan(slow.heartbeatMs / 4);
  });

  it("awaits beforeRelease before releasing: while it is pending no peer can take those partitions", async () => {
    let called!: (parts: readonly number[]) => void;
    const hookCalled = new Promise<readonly number[]>((resolve) => (called = resolve));
    let finish!: () => void;
    const a = await member("hook-a", (parts) => {
      called(parts);
      return new Promise<void>((resolve) => (finish = resolve));
    });
    await a.share.start();
    expect(a.share.held().size).toBe(COUNT);
    const b = await member("hook-b");
    await b.share.start();
    const extras = await hookCalled;
    try {
      expect(extras).toEqual([15, 14, 13, 12, 11, 10, 9, 8]);
      const pool = b.database.pool;
      const rows = await holders();
      for (const n of extras) expect(rows.get(n)).toBe(a.node.incarnation);
      expect(await acquireLease(pool, leaseOfPart(15), b.node.incarnation, CLUSTER.leaseTtlMs)).toMatchObject({
        holder: { owner: "hook-a" },
      });
      const taken = await takeFreeLeases(pool, extras.map(leaseOfPart), b.node.incarnation, CLUSTER.leaseTtlMs, 8);
      expect(taken.leases).toEqual([]);
      expect(b.share.held().size).toBe(0);
    } finally {
      finish(); // also when an assertion failed: a's pass must end for afterEach to stop it
    }
    await until(() => balanced([a, b], 8), 5_000);
    expect([...b.share.held()].sort((x, y) => x - y)).toEqual([...extras].sort((x, y) => x - y));
  });

  it("reports a partition another gateway took as a change, and takes it again once that holder is dead", async () => {
    const a = await member("lost-a");
    await a.share.start();
    const fence = a.node.held(leaseOfPart(3))!.fence;
    // A takeover by a holder that is no member (so dead at once): the heartbeat finds the lease gone.
    await a.database.pool.query(
      "UPDATE cluster_leases SET owner = 'gone-incarnation', fence = fence + 1 WHERE name = $1",
      [leaseOfPart(3)],
    );
    const withoutThree = Array.from({ length: COUNT }, (_, n) => n).filter((n) => n !== 3);
    await until(() => a.changes.some((held) => held.join() === withoutThree.join()), 5_000);
    await until(() => a.share.held().has(3), 5_000);
    expect(a.node.held(leaseOfPart(3))!.fence).toBe(fence + 2);
  });
});
