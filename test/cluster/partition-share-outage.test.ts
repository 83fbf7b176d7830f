// The partition share while its PostgreSQL server goes away (a server of the file's own, stopped
// and started): a failed pass is logged once and changes nothing; once the server is back the
// passes go on, so a member that joins then gets its share.
import { afterEach, describe, expect, it } from "vitest";
import { type ClusterNode, joinCluster } from "../../src/cluster/cluster-node.js";
import { type PartitionShare, createPartitionShare } from "../../src/cluster/partition-share.js";
import { createMemoryLogger } from "../../src/logger.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { until } from "../support/gateway-child.js";
import { freshSchema, usePrivatePostgres } from "../support/postgres.js";

// A server of its own: this test stops it.
const privateServer = usePrivatePostgres();
const COUNT = 16;
const CLUSTER = { leaseTtlMs: 15_000, heartbeatMs: 200 };
const PASS_FAILED = "partition share pass failed; trying again next pass";

interface Member {
  node: ClusterNode;
  share: PartitionShare;
  database: PostgresDatabase;
  logger: ReturnType<typeof createMemoryLogger>;
}

const members: Member[] = [];
afterEach(async () => {
  for (const member of members.splice(0)) {
    await member.share.stop();
    await member.node.leave();
    await member.database.close();
  }
});

async function member(schema: string, nodeId: string): Promise<Member> {
  const logger = createMemoryLogger();
  const database = await openPostgresDatabase({ url: privateServer().url, schema, logger, probeEveryMs: 0 });
  const node = await joinCluster({
    pool: database.pool,
    schema,
    member: { nodeId, host: "h", pid: 1, port: 0 },
    cluster: CLUSTER,
    logger,
    onLost: () => {},
  });
  const share = createPartitionShare({
    node,
    pool: database.pool,
    count: COUNT,
    ...CLUSTER,
    logger,
    beforeRelease: async () => {},
    onChange: async () => {},
  });
  const joined = { node, share, database, logger };
  members.push(joined);
  return joined;
}

describe("the partition share while PostgreSQL is away", () => {
  it("logs a failed pass once and keeps its partitions; once the server is back, a join gets its share", async () => {
    const schema = freshSchema();
    const a = await member(schema, "away-a");
    await a.share.start();
    expect(a.share.held().size).toBe(COUNT);
    await privateServer().stop("fast");
    const failures = () => a.logger.records.filter((record) => record.message === PASS_FAILED).length;
    await until(() => failures() > 0, 10_000);
    expect(a.share.held().size).toBe(COUNT);
    await privateServer().start();
    const b = await member(schema, "away-b");
    await b.share.start();
    await until(() => a.share.held().size === 8 && b.share.held().size === 8, 10_000);
    expect(failures()).toBe(1);
  }, 60_000);
});
