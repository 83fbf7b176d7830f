// The partition share's statements (src/cluster/partition-share-sql.ts) on a real PostgreSQL: "take
// up to k of these that are free" takes never-held, released, expired and dead holders' leases in the
// order asked, skips a live holder's, never gives one lease to two members taking at once, and with
// nothing free writes and locks nothing; the live members are those with a lock and a fresh heartbeat.
import type pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { acquireLease } from "../../src/cluster/lease-sql.js";
import { liveMembers, takeFreeLeases } from "../../src/cluster/partition-share-sql.js";
import { until } from "../support/gateway-child.js";
import { useLiveMembers } from "../support/live-members.js";
import { testPool } from "../support/postgres.js";

const { database: opened, member } = useLiveMembers("ps");
const TTL = 60_000;
let second: pg.Pool | undefined;
/** A second pool: a peer taking at the same time (opened at first use). */
const other = () => (second ??= testPool({ ...opened().pool.options, max: 2 }));
afterAll(async () => {
  await second?.end();
});

let batches = 0;
/** `n` lease names no other test uses. */
const names = (n: number) => {
  const batch = ++batches;
  return Array.from({ length: n }, (_, i) => `share-test:${batch}:${i}`);
};

describe("taking up to k free leases in one statement", () => {
  it("takes never-held leases up to k in the order asked, and skips the ones a live member holds", async () => {
    const [a, b] = [await member("take-a1"), await member("take-b1")];
    const all = names(6);
    await acquireLease(opened().pool, all[4]!, b.nodeId, TTL);
    const wanted = [all[5]!, all[4]!, all[3]!, all[2]!, all[1]!, all[0]!];
    expect(await takeFreeLeases(opened().pool, wanted, a.nodeId, TTL, 3)).toEqual({
      leases: [
        { name: all[5], fence: 1 },
        { name: all[3], fence: 1 },
        { name: all[2], fence: 1 },
      ],
      contended: false,
    });
  });

  it("takes released, expired and dead holders' leases with fence + 1, and keeps its own unreleased one's fence", async () => {
    const [a, b, c] = [await member("take-a2"), await member("take-b2"), await member("take-c2")];
    const [released, expired, dead, own] = names(4);
    await acquireLease(opened().pool, released!, b.nodeId, TTL);
    await opened().pool.query("UPDATE cluster_leases SET expires_at = '-infinity' WHERE name = $1", [released]);
    await acquireLease(opened().pool, expired!, b.nodeId, 1);
    await acquireLease(opened().pool, dead!, c.nodeId, TTL);
    await c.die();
    await acquireLease(opened().pool, own!, a.nodeId, 1);
    await opened().pool.query("SELECT pg_sleep(0.005)"); // past the 1 ms TTLs, by the server's clock
    const taken = await takeFreeLeases(opened().pool, [released!, expired!, dead!, own!], a.nodeId, TTL, 10);
    expect(taken.leases).toEqual([
      { name: released, fence: 2 },
      { name: expired, fence: 2 },
      { name: dead, fence: 2 },
      { name: own, fence: 1 },
    ]);
  });

  it("gives two members taking at once disjoint leases, every lease to one of them", async () => {
    const [a, b] = [await member("race-a"), await member("race-b")];
    for (let round = 0; round < 20; round++) {
      const all = names(16);
      if (round % 2 === 1) {
        // Rows that exist already (released): the upsert's update path, not only its insert.
        await opened().pool.query(
          "INSERT INTO cluster_leases (name, owner, fence, expires_at) SELECT unnest($1::text[]), 'nobody', 1, '-infinity'",
          [all],
        );
      }
      const reversed = [...all].reverse();
      const [fromA, fromB] = await Promise.all([
        takeFreeLeases(opened().pool, all, a.nodeId, TTL, 12),
        takeFreeLeases(other(), round % 4 < 2 ? all : reversed, b.nodeId, TTL, 12),
      ]);
      const namesA = fromA.leases.map((lease) => lease.name);
      const namesB = fromB.leases.map((lease) => lease.name);
      expect(
        namesA.filter((name) => namesB.includes(name)),
        `round ${round}`,
      ).toEqual([]);
      const { rows } = await opened().pool.query<{ name: string; owner: string }>(
        "SELECT name, owner FROM cluster_leases WHERE name = ANY($1) AND expires_at > now()",
        [all],
      );
      const owners = new Map(rows.map((row) => [row.name, row.owner]));
      for (const name of namesA) expect(owners.get(name)).toBe(a.nodeId);
      for (const name of namesB) expect(owners.get(name)).toBe(b.nodeId);
    }
  });

  it("says it was contended when a peer took first a lease it saw free (so its member runs a pass again)", async () => {
    const [a, b] = [await member("contend-a"), await member("contend-b")];
    const [first, second] = names(2);
    const peer = await other().connect();
    try {
      await peer.query("BEGIN");
      expect((await takeFreeLeases(peer, [first!], b.nodeId, TTL, 1)).leases).toHaveLength(1);
      // A's snapshot still sees `first` free: it asks for it, waits on the peer's row, then skips it.
      const taking = takeFreeLeases(opened().pool, [first!, second!], a.nodeId, TTL, 1);
      await until(async () => {
        const { rows } = await opened().pool.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO cluster_leases%'",
        );
        return rows[0].n > 0;
      });
      await peer.query("COMMIT");
      expect(await taking).toEqual({ leases: [], contended: true });
    } finally {
      peer.release();
    }
  });

  it("writes and locks nothing when nothing is free, even with a live holder's fenced transaction open", async () => {
    const [a, b] = [await member("calm-a"), await member("calm-b")];
    const all = names(4);
    for (const name of all) await acquireLease(opened().pool, name, b.nodeId, TTL);
    const writer = await other().connect();
    const client = await opened().pool.connect();
    try {
      await writer.query("BEGIN");
      await writer.query("SELECT 1 FROM cluster_leases WHERE name = ANY($1) FOR SHARE", [all]);
      await client.query("BEGIN");
      expect(await takeFreeLeases(client, all, a.nodeId, TTL, 4)).toEqual({ leases: [], contended: false });
      // No transaction id: the statement neither wrote a row nor locked one.
      const { rows } = await client.query("SELECT pg_current_xact_id_if_assigned() AS xid");
      expect(rows[0].xid).toBeNull();
    } finally {
      await client.query("ROLLBACK");
      client.release();
      await writer.query("ROLLBACK");
      writer.release();
    }
  });
});

/** The live members' incarnations as `self` sees them. */
const incarnations = async (self: string, ttlMs: number) =>
  (await liveMembers(opened().pool, self, ttlMs)).map((member) => member.incarnation);

describe("the live members", () => {
  it("counts members with their liveness lock and a heartbeat younger than the TTL, in node id order, and always itself", async () => {
    await opened().pool.query("DELETE FROM cluster_members");
    const [a, b, c] = [await member("live-a"), await member("live-b"), await member("live-c")];
    await c.die();
    expect(await incarnations(b.nodeId, TTL)).toEqual([a.nodeId, b.nodeId]);
    // A paused member keeps its lock but stops beating: past the TTL it no longer counts.
    await opened().pool.query(
      "UPDATE cluster_members SET heartbeat_at = now() - interval '2 seconds' WHERE node_id = $1",
      [a.nodeId],
    );
    expect(await incarnations(b.nodeId, 1_000)).toEqual([b.nodeId]);
    expect(await incarnations(c.nodeId, 1_000)).toEqual([b.nodeId, c.nodeId]);
  });
});
