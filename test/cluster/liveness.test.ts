// A member's liveness lock survives its connection breaking (the server restarted, a proxy cut it):
// the member reconnects and holds the lock again; and members that died long ago are forgotten.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { joinCluster } from "../../src/cluster/cluster-node.js";
import { joinMember } from "../../src/cluster/lease-sql.js";
import { livenessKey } from "../../src/cluster/liveness.js";
import { createMemoryLogger } from "../../src/logger.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
let database: PostgresDatabase;

beforeAll(async () => {
  if (!db.url) return;
  database = await openPostgresDatabase({
    url: db.url,
    schema: db.schema,
    logger: createMemoryLogger(),
    probeEveryMs: 0,
  });
});
afterAll(() => database?.close());

const alive = async (node: string) =>
  (await database.pool.query("SELECT cluster_node_alive($1) AS alive", [node])).rows[0].alive as boolean;

describe("cluster liveness", () => {
  it("takes its liveness lock again after its connection was cut, keeping its leases", async () => {
    const lost: unknown[] = [];
    const node = await joinCluster({
      pool: database.pool,
      schema: db.schema,
      member: { nodeId: "cut", host: "h", pid: 1, port: 0 },
      cluster: { leaseTtlMs: 60_000, heartbeatMs: 200 },
      logger: createMemoryLogger(),
      onLost: (lease) => lost.push(lease),
    });
    try {
      await node.acquire("cut-lease");
      await database.pool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ExclusiveLock'
           AND ((classid::bigint << 32) | objid::bigint) = $1::bigint`,
        [livenessKey(db.schema, "cut")],
      );
      await until(async () => !(await alive("cut")));
      await until(() => alive("cut"));
      // Heartbeats go on over the new connection, and the lease is still this member's.
      const beat = async () =>
        (await database.pool.query("SELECT heartbeat_at FROM cluster_members WHERE node_id = 'cut'")).rows[0]
          .heartbeat_at as Date;
      const before = (await beat()).getTime();
      await until(async () => (await beat()).getTime() > before);
      expect(node.held("cut-lease")).toEqual({ name: "cut-lease", fence: 1 });
      expect(lost).toEqual([]);
    } finally {
      await node.leave();
    }
  });

  it("forgets members that died without leaving once their heartbeat is older than the TTL and they hold nothing current", async () => {
    const lockKey = (node: string) => livenessKey(db.schema, node);
    await joinMember(database.pool, { nodeId: "gone-long", host: "h", pid: 2, port: 0, lockKey: lockKey("gone-long") });
    await joinMember(database.pool, { nodeId: "gone-now", host: "h", pid: 3, port: 0, lockKey: lockKey("gone-now") });
    await database.pool.query(
      "UPDATE cluster_members SET heartbeat_at = now() - interval '1 hour' WHERE node_id = 'gone-long'",
    );
    const node = await joinCluster({
      pool: database.pool,
      schema: db.schema,
      member: { nodeId: "joiner", host: "h", pid: 4, port: 0 },
      cluster: { leaseTtlMs: 15_000, heartbeatMs: 3_000 },
      logger: createMemoryLogger(),
      onLost: () => undefined,
    });
    try {
      const status = await node.status();
      expect(status.members.map((m) => [m.nodeId, m.alive])).toEqual(
        expect.arrayContaining([
          ["gone-now", false],
          ["joiner", true],
        ]),
      );
      expect(status.members.some((m) => m.nodeId === "gone-long")).toBe(false);
    } finally {
      await node.leave();
    }
  });
});
