// A fence per partition (docs/scale-out.md "The way there", step 2; migration 0010) on a real
// PostgreSQL: the owner takes `schema:writer` and every `partition:<n>` in one statement, all or
// none, and its heartbeat renews them in one; the row writer's batch carries the fences of exactly
// the partitions it touches, so a stale fence refuses the batches that touch its partition (SBF01
// naming it) and no other, and a takeover of one partition waits for the batch holding its lock.
import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import {
  FencedOutError,
  type HeldLease,
  acquireLeases,
  checkFence,
  heartbeat,
  joinMember,
} from "../../src/cluster/lease-sql.js";
import { parseConfig } from "../../src/config/index.js";
import { createGatewayCluster } from "../../src/gateway/core-cluster.js";
import { createMemoryLogger } from "../../src/logger.js";
import { partOf } from "../../src/routing/partition.js";
import { createPostgresTranscripts } from "../../src/sessions/transcripts/postgres-transcripts.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { openPostgresState } from "../../src/state/postgres/postgres-state.js";
import type { TableSpec } from "../../src/state/state-port.js";
import { until } from "../support/gateway-child.js";
import { countQueries, waitsOnLock } from "../support/pg-watch.js";
import { freshSchema, usePostgres } from "../support/postgres.js";

const db = usePostgres();
const opened: PostgresDatabase[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((database) => database.close()));
});

/** A table whose rows belong to the session their key names (as the sessions tables do). */
const perSession: TableSpec<{ text: string }> = {
  name: "sessions:main",
  path: "sessions.json",
  what: "session",
  check: (_key, row) => ({ value: row as { text: string } }),
  invalidRows: "keep",
  sessionOf: (key) => key,
};
/** A table of rows of no session (as cron's and pairing's): fenced by the writer lease. */
const global: TableSpec<{ text: string }> = { ...perSession, name: "cron-jobs", sessionOf: undefined };

/** Three session keys in three different partitions of 256. */
const [A, B, C] = ["agent:main:a", "agent:main:b", "agent:main:c"];

/** The state port on a database as the gateway guards it: this process owns the schema. */
async function openOwner(schema = freshSchema()) {
  const logger = createMemoryLogger();
  const plain = await openPostgresDatabase({ url: db.url, schema, logger, probeEveryMs: 0 });
  const queries = countQueries(plain.pool);
  const lost: HeldLease[] = [];
  const { config } = parseConfig({
    gateway: { nodeId: "pf-owner" },
    cluster: { leaseTtlMs: 180_000, heartbeatMs: 60_000 },
  });
  const cluster = createGatewayCluster({ config, logger, port: 0, onFencedOut: (lease) => lost.push(lease) });
  const database = await cluster.guard(plain);
  opened.push(database);
  const state = openPostgresState(database, { logger });
  const [sessions, cron] = await Promise.all([state.table(perSession), state.table(global)]);
  return { plain, database, sessions, cron, lost, queries };
}

/** Another gateway taking `lease` over: an UPDATE of its row, raising its fence. */
function takeOver(db: pg.Pool | pg.ClientBase, lease: string) {
  return db.query("UPDATE cluster_leases SET owner = 'pf-other', fence = fence + 1 WHERE name = $1", [lease]);
}

async function storedKeys(pool: pg.Pool, tbl: string): Promise<string[]> {
  const { rows } = await pool.query<{ key: string }>("SELECT key FROM state_rows WHERE tbl = $1 ORDER BY key", [tbl]);
  return rows.map((row) => row.key);
}

describe("partition leases", () => {
  it("takes the writer lease and all 256 partition leases in one statement, and renews the 257 in one", async () => {
    const { plain, queries } = await openOwner();
    expect(queries.filter((q) => q.includes("INSERT INTO cluster_leases"))).toHaveLength(1);
    const { rows } = await plain.pool.query<{ n: number; fences: number[] }>(
      "SELECT count(*)::int AS n, array_agg(DISTINCT fence)::int[] AS fences FROM cluster_leases l JOIN cluster_members m ON m.incarnation = l.owner WHERE m.node_id = 'pf-owner'",
    );
    expect(rows[0]).toEqual({ n: 257, fences: [1] });
    const { rows: me } = await plain.pool.query<{ incarnation: string }>(
      "SELECT incarnation FROM cluster_members WHERE node_id = 'pf-owner'",
    );
    expect(await heartbeat(plain.pool, me[0]!.incarnation, 60_000)).toHaveLength(257);
  });

  it("releases the 257 with the others at a clean stop; the next owner takes them all, each fence + 1", async () => {
    const schema = freshSchema();
    const first = await openOwner(schema);
    await first.database.close();
    const look = await openPostgresDatabase({ url: db.url, schema, logger: createMemoryLogger(), probeEveryMs: 0 });
    opened.push(look);
    const held = await look.pool.query("SELECT name FROM cluster_leases WHERE expires_at > '-infinity'");
    expect(held.rows).toEqual([]);
    const { plain } = await openOwner(schema);
    const { rows } = await plain.pool.query<{ n: number; fences: number[] }>(
      "SELECT count(*)::int AS n, array_agg(DISTINCT fence)::int[] AS fences FROM cluster_leases WHERE expires_at > now()",
    );
    expect(rows[0]).toEqual({ n: 257, fences: [2] });
  });

  it("renews while a fence check holds two of its leases: both lock in name order, so neither deadlocks", async () => {
    const { plain } = await openOwner();
    const me = await plain.pool.query<{ incarnation: string }>("SELECT incarnation FROM cluster_members");
    const owner = me.rows[0]!.incarnation;
    const [first, second] = [
      { name: "partition:10", fence: 1 },
      { name: "partition:11", fence: 1 },
    ];
    // The first row moved behind the second on its page: a scan meets them in the other order.
    await plain.pool.query("UPDATE cluster_leases SET expires_at = expires_at WHERE name = $1", [first.name]);
    const [holder, beater, checker] = [
      await plain.pool.connect(),
      await plain.pool.connect(),
      await plain.pool.connect(),
    ];
    await holder.query("BEGIN");
    await holder.query("SELECT 1 FROM cluster_leases WHERE name = $1 FOR UPDATE", [second.name]);
    const beat = heartbeat(beater, owner, 60_000);
    await until(() => waitsOnLock(plain.pool, "query LIKE $1", "%UPDATE cluster_leases l SET expires_at%"));
    await checker.query("BEGIN");
    const check = checkFence(checker, owner, [first, second]);
    await until(() => waitsOnLock(plain.pool, "query LIKE $1", "%cluster_check_fences%"));
    await holder.query("COMMIT");
    expect(await beat).toHaveLength(257);
    await check;
    await checker.query("COMMIT");
    for (const c of [holder, beater, checker]) c.release();
  });

  it("takes a group of leases all or none: one held by a live peer leaves the others free, naming that one", async () => {
    const { plain } = await openOwner();
    await joinMember(plain.pool, {
      nodeId: "pf-peer",
      incarnation: "pf-peer",
      host: "h",
      pid: 1,
      port: 1,
      lockKey: "1",
    });
    const names = ["partition:1", "test:free"];
    const refused = await acquireLeases(plain.pool, names, "pf-peer", 60_000);
    expect(refused).toMatchObject({ held: "partition:1", holder: { owner: "pf-owner" } });
    const { rows } = await plain.pool.query("SELECT 1 FROM cluster_leases WHERE name = 'test:free'");
    expect(rows).toEqual([]);
  });
});

describe("the row writer's batch on per-partition fences", () => {
  it("refuses a batch touching a stale partition (SBF01 naming it), and not one that does not touch it", async () => {
    expect(new Set([partOf(A), partOf(B), partOf(C)]).size).toBe(3);
    const { plain, sessions, cron, lost } = await openOwner();
    await sessions.set(A, { text: "before" });
    await takeOver(plain.pool, `partition:${partOf(A)}`);
    const refusal = sessions.set(A, { text: "lost" });
    await expect(refusal).rejects.toBeInstanceOf(FencedOutError);
    await expect(refusal).rejects.toThrow(`lease "partition:${partOf(A)}" with fence 1`);
    await expect(refusal).rejects.toMatchObject({ cause: { code: "SBF01", detail: `partition:${partOf(A)}` } });
    expect(lost).toEqual([{ name: `partition:${partOf(A)}`, fence: 1 }]);
    // The batches of other partitions and of rows of no session (the writer lease) still commit.
    await sessions.set(B, { text: "kept" });
    await cron.set("job", { text: "kept" });
    expect(await storedKeys(plain.pool, "sessions:main")).toEqual([A, B].sort());
    const { rows } = await plain.pool.query<{ value: { text: string } }>(
      "SELECT value FROM state_rows WHERE tbl = 'sessions:main' AND key = $1",
      [A],
    );
    expect(rows[0]!.value.text).toBe("before");
    expect(await storedKeys(plain.pool, "cron-jobs")).toEqual(["job"]);
  });

  it("refuses a batch of two partitions whole when one is stale: the gateway is fenced out (exit-on-loss)", async () => {
    const { plain, sessions, lost } = await openOwner();
    await takeOver(plain.pool, `partition:${partOf(B)}`);
    const writes = [sessions.set(A, { text: "a" }), sessions.set(B, { text: "b" })];
    for (const write of writes) await expect(write).rejects.toThrow(`partition:${partOf(B)}`);
    expect(lost.map((lease) => lease.name)).toEqual([`partition:${partOf(B)}`]);
    expect(await storedKeys(plain.pool, "sessions:main")).toEqual([]);
  });

  it("makes a takeover of one partition wait for an in-flight batch holding its lock, not a takeover of another", async () => {
    const { plain, sessions } = await openOwner();
    await sessions.set(A, { text: "first" });
    // Another transaction holds row A: the batch has locked its partition's lease, then waits on A.
    const holder = await plain.pool.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT 1 FROM state_rows WHERE key = $1 FOR UPDATE", [A]);
    const batch = sessions.set(A, { text: "second" });
    await until(() => waitsOnLock(plain.pool, "query LIKE $1", "%unnest($1::text[], $2::text[], $3::jsonb[]%"));
    // A partition the batch does not touch is taken at once, while the batch still waits.
    await takeOver(plain.pool, `partition:${partOf(C)}`);
    const taker = await plain.pool.connect();
    const pid = (await taker.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    const takeover = takeOver(taker, `partition:${partOf(A)}`);
    await until(() => waitsOnLock(plain.pool, "pid = $1", pid));
    await holder.query("COMMIT");
    holder.release();
    await takeover;
    taker.release();
    await batch; // it held the lock first: it landed before the takeover did
    const { rows } = await plain.pool.query<{ value: { text: string } }>(
      "SELECT value FROM state_rows WHERE tbl = 'sessions:main' AND key = $1",
      [A],
    );
    expect(rows[0]!.value.text).toBe("second");
    await expect(sessions.set(A, { text: "stale" })).rejects.toThrow(`partition:${partOf(A)}`);
  });

  it("refuses the removal of a row of a stale partition: a removal is fenced by the partition of the row it removes", async () => {
    const { plain, sessions } = await openOwner();
    await sessions.set(A, { text: "kept" });
    await takeOver(plain.pool, `partition:${partOf(A)}`);
    await expect(sessions.delete(A)).rejects.toThrow(`partition:${partOf(A)}`);
    expect(await storedKeys(plain.pool, "sessions:main")).toEqual([A]);
  });

  it("refuses every write, partitions' included, once the writer lease alone is taken (as a gateway of schema 0009 takes it)", async () => {
    const { plain, sessions, cron } = await openOwner();
    await plain.pool.query("UPDATE cluster_leases SET owner = 'older', fence = fence + 1 WHERE name LIKE '%:writer'");
    await expect(sessions.set(A, { text: "lost" })).rejects.toThrow("writer");
    await expect(cron.set("job", { text: "lost" })).rejects.toThrow("writer");
    expect(await storedKeys(plain.pool, "sessions:main")).toEqual([]);
    expect(await storedKeys(plain.pool, "cron-jobs")).toEqual([]);
  });

  it("fences a transcript's removal (a transaction of its own) by its session's partition, not the others'", async () => {
    const { plain, database, lost } = await openOwner();
    const transcripts = createPostgresTranscripts({ database, agentId: "main" });
    await transcripts.append("ta", { role: "user", content: "a" }, { sessionKey: A });
    await transcripts.append("tb", { role: "user", content: "b" }, { sessionKey: B });
    await takeOver(plain.pool, `partition:${partOf(A)}`);
    await expect(transcripts.remove("ta", { sessionKey: A })).rejects.toThrow(`partition:${partOf(A)}`);
    expect(await transcripts.remove("tb", { sessionKey: B })).toMatch(/^tb\./);
    expect(lost.map((lease) => lease.name)).toEqual([`partition:${partOf(A)}`]);
    const { rows } = await plain.pool.query<{ name: string }>("SELECT name FROM transcripts ORDER BY name");
    expect(rows.map((row) => row.name)).toEqual(["ta", expect.stringMatching(/^tb\./)]);
  });
});
