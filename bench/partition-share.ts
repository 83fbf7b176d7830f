// The partition share at the schema's 256 partitions (docs/scale-out.md "Partition share (step 7)"):
// three members in this process, each with a pool of its own, take their first shares at once; then
// the statements of a pass that changes nothing, and a fourth member's join until the split is even.
import { type ClusterNode, joinCluster } from "../src/cluster/cluster-node.js";
import { leaseOfPart } from "../src/cluster/cluster-status.js";
import { type PartitionShare, createPartitionShare } from "../src/cluster/partition-share.js";
import { liveMembers, takeFreeLeases } from "../src/cluster/partition-share-sql.js";
import type { Logger } from "../src/logger.js";
import { DEFAULT_PARTITIONS } from "../src/routing/partition.js";
import { type PostgresDatabase, openPostgresDatabase } from "../src/state/postgres/database.js";
import { type BenchTable, measureAsync } from "./harness.js";
import type { BenchPostgres } from "./postgres-server.js";

const silent: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const CLUSTER = { leaseTtlMs: 3_000, heartbeatMs: 200 };
const COUNT = DEFAULT_PARTITIONS;

interface Member {
  node: ClusterNode;
  share: PartitionShare;
  database: PostgresDatabase;
}

async function member(pg: BenchPostgres, schema: string, nodeId: string): Promise<Member> {
  const database = await openPostgresDatabase({ url: pg.url, schema, logger: silent, probeEveryMs: 0 });
  const node = await joinCluster({
    pool: database.pool,
    schema,
    member: { nodeId, host: "bench", pid: process.pid, port: 0 },
    cluster: CLUSTER,
    logger: silent,
    onLost: () => {},
  });
  const share = createPartitionShare({
    node,
    pool: database.pool,
    count: COUNT,
    ...CLUSTER,
    logger: silent,
    beforeRelease: async () => {},
    onChange: async () => {},
  });
  return { node, share, database };
}

/** Resolves once every member holds at most `share` and all partitions are held. */
async function balanced(group: Member[], share: number): Promise<void> {
  for (;;) {
    const sizes = group.map((m) => m.share.held().size);
    if (sizes.every((size) => size <= share) && sizes.reduce((a, b) => a + b, 0) === COUNT) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The partitions `m` does not hold, as the take statement of its pass asks for them. */
const others = (m: Member) =>
  Array.from({ length: COUNT }, (_, n) => n)
    .filter((n) => !m.share.held().has(n))
    .map(leaseOfPart);

/** A row of wall ms since `started`. */
const since = (name: string, started: number) => ({
  case: name,
  "median ms": Number((performance.now() - started).toFixed(1)),
});

/** Medians of a steady pass's statements: at its share (a read), and below it with nothing free (a read and a take). */
async function steadyPasses(pg: BenchPostgres, group: Member[]) {
  const a = group[0]!;
  const below = group.reduce((min, m) => (m.share.held().size < min.share.held().size ? m : min));
  const trips = pg.roundTrips();
  const read = () => liveMembers(a.database.pool, a.node.incarnation, CLUSTER.leaseTtlMs);
  const take = async () => {
    await liveMembers(below.database.pool, below.node.incarnation, CLUSTER.leaseTtlMs);
    const taken = await takeFreeLeases(below.database.pool, others(below), below.node.incarnation, 3_000, 2);
    if (taken.leases.length) throw new Error("a steady take took something");
  };
  const rows = [
    { case: "steady pass at its share: live members read (1 statement)", "median ms": await measureAsync(read, 30, 5) },
    {
      case: `steady pass below its share (${below.share.held().size}): read + take of nothing (2 statements)`,
      "median ms": await measureAsync(take, 30, 5),
    },
  ].map((row) => ({ ...row, "median ms": Number(row["median ms"].toFixed(2)) }));
  return { rows, perPass: (pg.roundTrips() - trips) / 70 };
}

/** Median ms of a steady pass's statements, first shares and a join, at 256 partitions. */
export async function benchPartitionShare(pg: BenchPostgres): Promise<BenchTable> {
  const schema = pg.freshSchema();
  const group = [await member(pg, schema, "m-a"), await member(pg, schema, "m-b"), await member(pg, schema, "m-c")];
  const rows: Array<Record<string, string | number>> = [];
  let perPass = 0;
  try {
    let started = performance.now();
    await Promise.all(group.map((m) => m.share.start()));
    await balanced(group, Math.ceil(COUNT / 3));
    rows.push(since("3 members: first shares, all 256 held", started));
    const steady = await steadyPasses(pg, group);
    rows.push(...steady.rows);
    perPass = steady.perPass;
    started = performance.now();
    const d = await member(pg, schema, "m-d");
    group.push(d);
    await d.share.start();
    await balanced(group, COUNT / 4);
    rows.push(since("4th member joins: even split (64 each)", started));
  } finally {
    for (const m of group) {
      await m.share.stop();
      await m.node.leave();
      await m.database.close();
    }
  }
  return {
    title: `partition share, ${COUNT} partitions, heartbeatMs ${CLUSTER.heartbeatMs}`,
    rows,
    notes: [
      "first shares and the join: one run each (wall ms); steady passes: medians of 30 after 5 warm-ups",
      `round trips per steady pass measured (both kinds averaged): ${perPass.toFixed(2)}; heartbeats of the 3 members run meanwhile`,
    ],
  };
}
