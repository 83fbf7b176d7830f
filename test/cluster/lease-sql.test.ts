// The cluster's SQL (src/cluster/lease-sql.ts, migration 0004) on a real PostgreSQL: fences rise
// on every takeover, a stale fence is refused inside a transaction, a takeover waits for the old
// owner's in-flight commit, and a member whose liveness lock is gone loses its leases at once.
// A member's liveness lock is taken again after its connection is cut, and members that died long
// ago are forgotten. The claims between gateways are proven with real processes in test/e2e/cluster-*.test.ts.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { joinCluster } from "../../src/cluster/cluster-node.js";
import { readClusterStatus } from "../../src/cluster/cluster-status.js";
import {
  FencedOutError,
  acquireLease,
  checkFence,
  heartbeat,
  holderWait,
  joinMember,
  leaveMember,
  releaseLease,
} from "../../src/cluster/lease-sql.js";
import { livenessKey } from "../../src/cluster/liveness.js";
import { until } from "../support/gateway-child.js";
import { createMemoryLogger } from "../../src/logger.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
let database: PostgresDatabase;
const clients: pg.Client[] = [];
const TTL = 60_000;

beforeAll(async () => {
  if (!db.url) return;
  database = await openPostgresDatabase({
    url: db.url,
    schema: db.schema,
    logger: createMemoryLogger(),
    probeEveryMs: 0,
  });
});
afterAll(async () => {
  for (const client of clients) await client.end().catch(() => {});
  await database?.close();
});

/** A member whose liveness lock is held by a connection of its own (closing it is the member dying). */
async function member(nodeId: string, port = 1000): Promise<{ nodeId: string; liveness: pg.Client }> {
  const lockKey = livenessKey(db.schema, nodeId);
  const liveness = new pg.Client(database.pool.options);
  clients.push(liveness);
  await liveness.connect();
  await liveness.query("SELECT pg_advisory_lock($1::bigint)", [lockKey]);
  await joinMember(database.pool, { nodeId, incarnation: nodeId, host: "host-a", pid: 4242, port, lockKey });
  return { nodeId, liveness };
}

let leases = 0;
const leaseName = () => `test:${++leases}`;

describe("cluster leases in SQL", () => {
  it("gives a free lease fence 1, refuses it to another live member naming the holder, and keeps the fence on renewal", async () => {
    const [a, b] = [await member("sql-a1", 18001), await member("sql-b1")];
    const name = leaseName();
    expect(await acquireLease(database.pool, name, a.nodeId, TTL)).toEqual({ lease: { name, fence: 1 } });
    expect(await acquireLease(database.pool, name, b.nodeId, TTL)).toEqual({
      holder: { owner: a.nodeId, fence: 1, host: "host-a", pid: 4242, port: 18001 },
    });
    expect(await acquireLease(database.pool, name, a.nodeId, TTL)).toEqual({ lease: { name, fence: 1 } });
  });

  it("renews all of a member's leases and its heartbeat in one statement, and no one else's", async () => {
    const [a, b] = [await member("sql-a2"), await member("sql-b2")];
    const [x, y, z] = [leaseName(), leaseName(), leaseName()];
    await acquireLease(database.pool, x, a.nodeId, 5_000);
    await acquireLease(database.pool, y, a.nodeId, 5_000);
    await acquireLease(database.pool, z, b.nodeId, 5_000);
    const renewed = await heartbeat(database.pool, a.nodeId, TTL);
    expect(renewed.map((lease) => lease.name).sort()).toEqual([x, y]);
    const status = await readClusterStatus(database.pool);
    const leasesOf = (node: string) => status.members.find((m) => m.nodeId === node)!.leases;
    expect(leasesOf(a.nodeId).every((lease) => lease.expiresInMs > 50_000)).toBe(true);
    expect(leasesOf(b.nodeId)[0]!.expiresInMs).toBeLessThanOrEqual(5_000);
  });

  it("lets a peer take a dead member's lease at once (liveness lock gone), well before it expires, with a higher fence", async () => {
    const [a, b] = [await member("sql-a3"), await member("sql-b3")];
    const name = leaseName();
    await acquireLease(database.pool, name, a.nodeId, TTL);
    await a.liveness.end();
    expect(await acquireLease(database.pool, name, b.nodeId, TTL)).toEqual({ lease: { name, fence: 2 } });
    const status = await readClusterStatus(database.pool);
    expect(status.members.find((m) => m.nodeId === a.nodeId)!.alive).toBe(false);
    expect(status.members.find((m) => m.nodeId === b.nodeId)!.alive).toBe(true);
  });

  it("lets a peer take an expired lease of a live member; the old owner's fenced write and renewal are then refused", async () => {
    const [a, b] = [await member("sql-a4"), await member("sql-b4")];
    const name = leaseName();
    await acquireLease(database.pool, name, a.nodeId, 1);
    await until(async () => "lease" in (await acquireLease(database.pool, name, b.nodeId, TTL)));
    const client = await database.pool.connect();
    try {
      await client.query("BEGIN");
      await expect(checkFence(client, a.nodeId, { name, fence: 1 })).rejects.toBeInstanceOf(FencedOutError);
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
    expect(await heartbeat(database.pool, a.nodeId, TTL)).toEqual([]);
    expect(await releaseLease(database.pool, a.nodeId, { name, fence: 1 })).toBe(false);
  });

  it("makes a takeover wait for the owner's in-flight fenced transaction, then refuses the owner's next one", async () => {
    const [a, b] = [await member("sql-a5"), await member("sql-b5")];
    const name = leaseName();
    await acquireLease(database.pool, name, a.nodeId, TTL);
    const writer = await database.pool.connect();
    await writer.query("BEGIN");
    await checkFence(writer, a.nodeId, { name, fence: 1 });
    await a.liveness.end(); // dead: its lease is free to take, but its open transaction holds the row
    const taker = new pg.Client(database.pool.options);
    clients.push(taker);
    await taker.connect();
    const takerPid = (await taker.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    const takeover = acquireLease(taker, name, b.nodeId, TTL);
    await until(async () => {
      const { rows } = await database.pool.query("SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1", [
        takerPid,
      ]);
      return rows[0]?.wait_event_type === "Lock";
    });
    await writer.query("INSERT INTO state_rows (tbl, key, value) VALUES ('fenced', 'a', '1')");
    await writer.query("COMMIT");
    expect(await takeover).toEqual({ lease: { name, fence: 2 } });
    await writer.query("BEGIN");
    await expect(checkFence(writer, a.nodeId, { name, fence: 1 })).rejects.toBeInstanceOf(FencedOutError);
    await writer.query("ROLLBACK");
    writer.release();
    const { rows } = await database.pool.query("SELECT key FROM state_rows WHERE tbl = 'fenced'");
    expect(rows).toEqual([{ key: "a" }]);
  });

  it("ends a paused owner's transaction once it idles longer than its timeout, so a takeover does not wait for ever", async () => {
    const [a, b] = [await member("sql-a7"), await member("sql-b7")];
    const name = leaseName();
    await acquireLease(database.pool, name, a.nodeId, TTL);
    const paused = await database.pool.connect();
    await checkFence(paused, a.nodeId, { name, fence: 1 }, { begin: true, idleTimeoutMs: 300 });
    await a.liveness.end();
    // The owner sends nothing more (paused); the server ends its session and the takeover goes on.
    expect(await acquireLease(database.pool, name, b.nodeId, TTL)).toEqual({ lease: { name, fence: 2 } });
    const late = await paused.query("COMMIT").then(
      () => undefined,
      (err: Error) => err,
    );
    expect(late?.message).toMatch(/idle-in-transaction timeout|terminat|Connection/i);
    paused.release(late);
  });

  it("frees a released lease for a peer at once and keeps its fence rising (rows are never deleted)", async () => {
    const [a, b] = [await member("sql-a6"), await member("sql-b6")];
    const name = leaseName();
    await acquireLease(database.pool, name, a.nodeId, TTL);
    expect(await releaseLease(database.pool, a.nodeId, { name, fence: 1 })).toBe(true);
    expect(await heartbeat(database.pool, a.nodeId, TTL)).toEqual([]);
    expect(await acquireLease(database.pool, name, b.nodeId, TTL)).toEqual({ lease: { name, fence: 2 } });
    await leaveMember(database.pool, b.nodeId);
    expect(await acquireLease(database.pool, name, a.nodeId, TTL)).toEqual({ lease: { name, fence: 3 } });
    const status = await readClusterStatus(database.pool);
    expect(status.members.some((m) => m.nodeId === b.nodeId)).toBe(false);
  });

  it("tells a waiting peer that a lease released after its refused acquire is free now (wait 0), instead of failing on the release's -infinity", async () => {
    // A standby refused while the owner held the lease asks how long to wait; the owner stopped
    // cleanly in between. This failed with "cannot subtract infinite timestamps", and the standby exited 1.
    const [a, b] = [await member("sql-a8"), await member("sql-b8")];
    const name = leaseName();
    await acquireLease(database.pool, name, a.nodeId, TTL);
    expect(await acquireLease(database.pool, name, b.nodeId, TTL)).not.toHaveProperty("lease");
    expect((await holderWait(database.pool, name))?.ms).toBeGreaterThan(TTL - 5_000);
    await releaseLease(database.pool, a.nodeId, { name, fence: 1 });
    expect(await holderWait(database.pool, name)).toEqual({ key: livenessKey(db.schema, a.nodeId), ms: 0 });
    expect(await acquireLease(database.pool, name, b.nodeId, TTL)).toEqual({ lease: { name, fence: 2 } });
  });
});

/** A member joined in this process (the claims between processes are in test/e2e/cluster-leases.test.ts). */
const joinAs = (
  nodeId: string,
  cluster: { leaseTtlMs: number; heartbeatMs: number },
  onLost: (lease: unknown) => void,
) =>
  joinCluster({
    pool: database.pool,
    schema: db.schema,
    member: { nodeId, host: "h", pid: 1, port: 0 },
    cluster,
    logger: createMemoryLogger(),
    onLost,
  });

const alive = async (node: string) =>
  (await database.pool.query("SELECT cluster_node_alive($1) AS alive", [node])).rows[0].alive as boolean;

describe("cluster liveness", () => {
  it("takes its liveness lock again after its connection was cut, keeping its leases", async () => {
    const lost: unknown[] = [];
    const node = await joinAs("cut", { leaseTtlMs: 60_000, heartbeatMs: 200 }, (lease) => lost.push(lease));
    try {
      await node.acquire("cut-lease");
      await database.pool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ExclusiveLock'
           AND ((classid::bigint << 32) | objid::bigint) = $1::bigint`,
        [livenessKey(db.schema, "cut")],
      );
      await until(async () => !(await alive(node.incarnation)));
      await until(() => alive(node.incarnation));
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

  it("gives its leases up when its liveness lock, on reconnecting, is held by a later process under its node id", async () => {
    const lost: unknown[] = [];
    const node = await joinAs("usurped", { leaseTtlMs: 60_000, heartbeatMs: 200 }, (lease) => lost.push(lease));
    try {
      await node.acquire("usurped-lease");
      // The later process waits on the lock first, so it has it before the node reconnects.
      const later = new pg.Client(database.pool.options);
      clients.push(later);
      await later.connect();
      const taken = later.query("SELECT pg_advisory_lock($1::bigint)", [livenessKey(db.schema, "usurped")]);
      await until(
        async () =>
          (await database.pool.query("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rowCount ===
          1,
      );
      await database.pool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ExclusiveLock' AND granted
           AND ((classid::bigint << 32) | objid::bigint) = $1::bigint`,
        [livenessKey(db.schema, "usurped")],
      );
      await taken;
      await until(() => lost.length === 1);
      expect(lost).toEqual([{ name: "usurped-lease", fence: 1 }]);
      expect(node.held("usurped-lease")).toBeUndefined();
    } finally {
      await node.leave();
    }
  });

  it("forgets members that died without leaving once their heartbeat is older than the TTL and they hold nothing current", async () => {
    const lockKey = (node: string) => livenessKey(db.schema, node);
    await joinMember(database.pool, {
      nodeId: "gone-long",
      incarnation: "gone-long",
      host: "h",
      pid: 2,
      port: 0,
      lockKey: lockKey("gone-long"),
    });
    await joinMember(database.pool, {
      nodeId: "gone-now",
      incarnation: "gone-now",
      host: "h",
      pid: 3,
      port: 0,
      lockKey: lockKey("gone-now"),
    });
    await database.pool.query(
      "UPDATE cluster_members SET heartbeat_at = now() - interval '1 hour' WHERE node_id = 'gone-long'",
    );
    const node = await joinAs("joiner", { leaseTtlMs: 15_000, heartbeatMs: 3_000 }, () => undefined);
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
