// Send lanes claimed on a real PostgreSQL (docs/scale-out.md "Sends claimed per chat lane";
// migration 0012): the owner claims a chat's lane in one statement that checks its session's
// partition fence inside it, a young claim costs no round trip, a lane held by a gateway that
// still owns its leases is refused to others, and a holder whose partition was taken over claims
// nothing more. In many mode a lane whose queue emptied, and every lane at a core's stop, is
// released: a peer takes it at once.
import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { type HeldLease, isFenceRefusal, leaveMember } from "../../src/cluster/lease-sql.js";
import { claimLanes, pruneLanes, releaseLanes } from "../../src/cluster/lane-claim-sql.js";
import { parseConfig } from "../../src/config/index.js";
import { createGatewayCluster } from "../../src/gateway/core-cluster.js";
import { ownerLaneClaims } from "../../src/gateway/owner-lane-claims.js";
import { createMemoryLogger } from "../../src/logger.js";
import { partOf } from "../../src/routing/partition.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { until } from "../support/gateway-child.js";
import { countQueries, waitsOnLock } from "../support/pg-watch.js";
import { freshSchema, usePostgres } from "../support/postgres.js";

const db = usePostgres();
const opened: PostgresDatabase[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((database) => database.close()));
});

const TTL = 180_000;
/** A chat's lane (channel|account|chat|thread) and the session sending to it. */
const LANE = "telegram|default|111|";
const SESSION = "agent:main:telegram:dm:111";

/** A gateway that owns a fresh schema, as `gateway run` guards it. */
async function openOwner() {
  const logger = createMemoryLogger();
  const plain = await openPostgresDatabase({ url: db.url, schema: freshSchema(), logger, probeEveryMs: 0 });
  const queries = countQueries(plain.pool);
  const lost: HeldLease[] = [];
  const { config } = parseConfig({
    gateway: { nodeId: "lc-owner" },
    cluster: { leaseTtlMs: TTL, heartbeatMs: 60_000 },
  });
  const cluster = createGatewayCluster({ config, logger, port: 0, onFencedOut: (lease) => lost.push(lease) });
  const database = await cluster.guard(plain);
  opened.push(database);
  const incarnation = database.fence!([null]).owner;
  return { plain, database, cluster, incarnation, lost, queries };
}

async function lanes(pool: pg.Pool) {
  const { rows } = await pool.query<{ lane: string; holder: string; fence: string }>(
    "SELECT lane, holder, fence FROM outbox_lanes ORDER BY lane",
  );
  return rows.map((row) => ({ lane: row.lane, holder: row.holder, fence: Number(row.fence) }));
}

describe("lane claims", () => {
  it("claims a lane in one statement carrying its session's partition fence; a young claim asks nothing more; lanes asked at once share one statement", async () => {
    const { plain, cluster, incarnation, queries } = await openOwner();
    const before = queries.length;
    expect(await cluster.holdsLane(LANE, SESSION)).toBe(true);
    expect(await cluster.holdsLane(LANE, SESSION)).toBe(true);
    expect(await cluster.holdsLane(LANE, SESSION)).toBe(true);
    const sent = queries.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain("INSERT INTO outbox_lanes");
    expect(sent[0]).toContain("cluster_check_fences");
    expect(await lanes(plain.pool)).toEqual([{ lane: LANE, holder: incarnation, fence: 1 }]);

    const others = ["telegram|default|222|", "telegram|default|333|", "discord|default|c9|"];
    const mark = queries.length;
    const asked = await Promise.all(others.map((lane, i) => cluster.holdsLane(lane, `agent:main:x:${i}`)));
    expect(asked).toEqual([true, true, true]);
    expect(queries.slice(mark)).toHaveLength(1);
    expect(await lanes(plain.pool)).toHaveLength(4);
  });

  it("refuses a lane to another gateway while its holder owns its leases; gives it at once, fence + 1, once they were taken over", async () => {
    const { plain, cluster, incarnation } = await openOwner();
    expect(await cluster.holdsLane(LANE, SESSION)).toBe(true);
    expect(await claimLanes(plain.pool, [LANE], "lc-peer~1", TTL, undefined)).toEqual([]);
    // The owner's leases taken over (a paused owner replaced at its TTL): its lanes are free at once.
    await plain.pool.query("UPDATE cluster_leases SET owner = 'lc-peer~1', fence = fence + 1 WHERE owner = $1", [
      incarnation,
    ]);
    expect(await claimLanes(plain.pool, [LANE], "lc-peer~1", TTL, undefined)).toEqual([{ lane: LANE, fence: 2 }]);
    // Renewed by its holder: the fence stays.
    expect(await claimLanes(plain.pool, [LANE], "lc-peer~1", TTL, undefined)).toEqual([{ lane: LANE, fence: 2 }]);
    // A claim past its `until` is free even while its holder owns leases.
    await plain.pool.query("UPDATE outbox_lanes SET holder = $1, until = now() - interval '1 second'", [incarnation]);
    await plain.pool.query("UPDATE cluster_leases SET owner = $1 WHERE owner = 'lc-peer~1'", [incarnation]);
    expect(await claimLanes(plain.pool, [LANE], "lc-peer~1", TTL, undefined)).toEqual([{ lane: LANE, fence: 3 }]);
  });

  it("gives a cleanly stopped holder's lane to a peer at once, fence + 1, though its until has not passed", async () => {
    const { plain, cluster, incarnation } = await openOwner();
    expect(await cluster.holdsLane(LANE, SESSION)).toBe(true);
    // The clean stop's own statement: every lease of the incarnation released (-infinity).
    await leaveMember(plain.pool, incarnation);
    expect(await claimLanes(plain.pool, [LANE], "lc-peer~1", TTL, undefined)).toEqual([{ lane: LANE, fence: 2 }]);
    expect(await lanes(plain.pool)).toEqual([{ lane: LANE, holder: "lc-peer~1", fence: 2 }]);
  });

  it("claims nothing once the session's partition was taken over: the statement is refused (SBF01), the lease lost, the lane left as it was", async () => {
    const { plain, database, incarnation, lost } = await openOwner();
    let now = 0;
    const holdsLane = ownerLaneClaims(database, incarnation, TTL, { clock: () => now });
    expect(await holdsLane(LANE, SESSION)).toBe(true);
    const partition = `partition:${partOf(SESSION, database.partitions)}`;
    await plain.pool.query("UPDATE cluster_leases SET owner = 'lc-peer~1', fence = fence + 1 WHERE name = $1", [
      partition,
    ]);
    // Young: no statement, so no refusal yet (the send guard and the chunk's fenced claim still stand).
    now = TTL * 0.79;
    expect(await holdsLane(LANE, SESSION)).toBe(true);
    now = TTL * 0.8;
    const refused = await holdsLane(LANE, SESSION).catch((err: unknown) => err);
    expect(isFenceRefusal((refused as { cause?: unknown }).cause)).toBe(true);
    expect(lost.map((lease) => lease.name)).toEqual([partition]);
    expect(await lanes(plain.pool)).toEqual([{ lane: LANE, holder: incarnation, fence: 1 }]);
  });

  it("deletes the lane rows a day past their until, at a claim an hour after the start and again an hour after that, and keeps the others", async () => {
    const { plain, database, incarnation, queries } = await openOwner();
    await plain.pool.query(
      `INSERT INTO outbox_lanes (lane, holder, fence, until) VALUES
         ('telegram|default|old|', 'gone~1', 3, now() - interval '25 hours'),
         ('telegram|default|recent|', 'gone~1', 1, now() - interval '23 hours')`,
    );
    let now = 0;
    const holdsLane = ownerLaneClaims(database, incarnation, TTL, { clock: () => now });
    const deletes = () => queries.filter((sql) => sql.includes("DELETE FROM outbox_lanes")).length;
    // Claims within the first hour prune nothing (two statements: the second once the first is old).
    expect(await holdsLane(LANE, SESSION)).toBe(true);
    now = TTL;
    expect(await holdsLane(LANE, SESSION)).toBe(true);
    expect(deletes()).toBe(0);
    // The first claim an hour after the start does.
    now = 3_600_000;
    expect(await holdsLane(LANE, SESSION)).toBe(true);
    await expect
      .poll(async () => (await lanes(plain.pool)).map((row) => row.lane))
      .toEqual([LANE, "telegram|default|recent|"]);
    now += TTL;
    expect(await holdsLane(LANE, SESSION)).toBe(true);
    expect(deletes()).toBe(1);
    // An hour after that prune, the next claim prunes again: the row that has aged past its day goes.
    await plain.pool.query("UPDATE outbox_lanes SET until = now() - interval '25 hours' WHERE holder = 'gone~1'");
    now = 2 * 3_600_000;
    expect(await holdsLane(LANE, SESSION)).toBe(true);
    await expect.poll(async () => (await lanes(plain.pool)).map((row) => row.lane)).toEqual([LANE]);
    expect(deletes()).toBe(2);
  });

  it("prunes without waiting on a lane row a claim holds locked: that row is skipped, the others go", async () => {
    const { plain } = await openOwner();
    await plain.pool.query(
      `INSERT INTO outbox_lanes (lane, holder, fence, until) VALUES
         ('telegram|default|a|', 'gone~1', 1, now() - interval '25 hours'),
         ('telegram|default|b|', 'gone~1', 1, now() - interval '25 hours')`,
    );
    // A claim in flight: its upsert holds the row of lane a until it commits.
    const claim = await plain.pool.connect();
    await claim.query("BEGIN");
    await claim.query("SELECT 1 FROM outbox_lanes WHERE lane = 'telegram|default|a|' FOR UPDATE");
    try {
      let settled = false;
      const pruning = pruneLanes(plain.pool, 86_400_000).finally(() => {
        settled = true;
      });
      const deleteWaits = () => waitsOnLock(plain.pool, "query LIKE $1", "%DELETE FROM outbox_lanes%");
      const waited = until(async () => settled || (await deleteWaits()));
      expect(await Promise.race([pruning, waited.then(() => "waited on the claim")])).toBe(1);
    } finally {
      await claim.query("ROLLBACK");
      claim.release();
    }
    expect((await lanes(plain.pool)).map((row) => row.lane)).toEqual(["telegram|default|a|"]);
  });

  it("releases the lanes emptied together in one statement: a peer takes them at once, fence + 1, though their until has not passed", async () => {
    const { plain, database, incarnation, queries } = await openOwner();
    const holdsLane = ownerLaneClaims(database, incarnation, TTL, { releaseOn: plain });
    const other = "telegram|default|222|";
    expect(await Promise.all([holdsLane(LANE, SESSION), holdsLane(other, SESSION)])).toEqual([true, true]);
    const mark = queries.length;
    holdsLane.release(LANE);
    holdsLane.release(other);
    const releases = () => queries.slice(mark).filter((sql) => sql.includes("SET until = now()"));
    await until(() => releases().length === 1);
    await until(async () => (await claimLanes(plain.pool, [LANE, other], "lc-peer~1", TTL, undefined)).length === 2);
    expect(releases()).toHaveLength(1);
    expect(await lanes(plain.pool)).toEqual([
      { lane: LANE, holder: "lc-peer~1", fence: 2 },
      { lane: other, holder: "lc-peer~1", fence: 2 },
    ]);
  });

  it("releases every lane of the holder at a core's stop in one statement, and no other holder's", async () => {
    const { plain, database, incarnation, queries } = await openOwner();
    const holdsLane = ownerLaneClaims(database, incarnation, TTL, { releaseOn: plain });
    const mine = ["telegram|default|222|", "telegram|default|333|"];
    expect(await Promise.all(mine.map((lane) => holdsLane(lane, SESSION)))).toEqual([true, true]);
    await plain.pool.query(
      "INSERT INTO outbox_lanes (lane, holder, fence, until) VALUES ($1, 'lc-peer~1', 1, now() + interval '1 hour')",
      [LANE],
    );
    const mark = queries.length;
    await holdsLane.releaseAll();
    expect(queries.slice(mark)).toHaveLength(1);
    const { rows } = await plain.pool.query<{ lane: string; free: boolean }>(
      "SELECT lane, until <= now() AS free FROM outbox_lanes ORDER BY lane",
    );
    expect(rows).toEqual([
      { lane: LANE, free: false },
      { lane: mine[0], free: true },
      { lane: mine[1], free: true },
    ]);
    // Forgotten too: the next send claims the lane again (renewed: its fence stays).
    expect(await holdsLane(mine[0]!, SESSION)).toBe(true);
    expect(queries.slice(mark).filter((sql) => sql.includes("INSERT INTO outbox_lanes"))).toHaveLength(1);
    expect(await releaseLanes(plain.pool, "all", "nobody~1")).toBe(0);
  });
});
