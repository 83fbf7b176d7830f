// One cluster member running its partition share (src/cluster/partition-share.ts) in a process of its
// own, for tests that SIGKILL or SIGSTOP a member. It prints "ready <nodeId> <incarnation>" once its
// first share is taken, `held {"held":[..],"previous":[..]}` on every change (partitions in ascending
// order), and "lost <name> <fence>" when its heartbeat finds a lease taken over. Env: SB_PG_URL,
// SB_SCHEMA, SB_NODE_ID, SB_CLUSTER (JSON: leaseTtlMs, heartbeatMs), SB_PARTITIONS (the count).
import { joinCluster } from "../../src/cluster/cluster-node.js";
import { createPartitionShare } from "../../src/cluster/partition-share.js";
import { createLogger } from "../../src/logger.js";
import { openPostgresDatabase } from "../../src/state/postgres/database.js";

const logger = createLogger("warn");
const say = (line: string) => process.stdout.write(`${line}\n`);
const sorted = (parts: ReadonlySet<number>) => [...parts].sort((a, b) => a - b);
const cluster = JSON.parse(process.env.SB_CLUSTER!) as { leaseTtlMs: number; heartbeatMs: number };
const database = await openPostgresDatabase({
  url: process.env.SB_PG_URL!,
  schema: process.env.SB_SCHEMA!,
  logger,
  probeEveryMs: 0,
});
const node = await joinCluster({
  pool: database.pool,
  schema: database.schema,
  member: { nodeId: process.env.SB_NODE_ID!, host: "test-host", pid: process.pid, port: 0 },
  cluster,
  logger,
  onLost: (lease) => say(`lost ${lease.name} ${lease.fence}`),
});
const share = createPartitionShare({
  node,
  pool: database.pool,
  count: Number(process.env.SB_PARTITIONS),
  ...cluster,
  logger,
  beforeRelease: async () => {},
  onChange: async (held, previous) => {
    say(`held ${JSON.stringify({ held: sorted(held), previous: sorted(previous) })}`);
  },
});
await share.start();
say(`ready ${node.nodeId} ${node.incarnation}`);
