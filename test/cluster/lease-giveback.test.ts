// The give-back of `acquireLeases` (src/cluster/lease-sql.ts) on a real PostgreSQL: two gateways
// asking for overlapping groups of leases in the same instant. Each statement sees the others' rows
// only once they commit, so the second one takes the leases nobody else asked for, then finds one
// the first took meanwhile: it must give back what it took, so a group is held all or none. The
// "same instant" is made sure, not hoped for: the first acquirer's transaction stays open until the
// second is seen waiting on its row lock (pg_stat_activity), then commits.
import { describe, expect, it } from "vitest";
import { acquireLeases } from "../../src/cluster/lease-sql.js";
import { until } from "../support/gateway-child.js";
import { useLiveMembers } from "../support/live-members.js";
import { waitsOnLock } from "../support/pg-watch.js";

const { database: opened, member } = useLiveMembers("gb");
const TTL = 60_000;

/** The leases among `names` that `owner` holds now, by name, with their fences. */
async function heldBy(owner: string, names: string[]): Promise<Record<string, number>> {
  const { rows } = await opened().pool.query<{ name: string; fence: string }>(
    "SELECT name, fence FROM cluster_leases WHERE owner = $1 AND name = ANY($2) AND expires_at > now() ORDER BY name",
    [owner, names],
  );
  return Object.fromEntries(rows.map((row) => [row.name, Number(row.fence)]));
}

describe("a group of leases asked for by two gateways in the same instant", () => {
  it("gives back the leases it took when a peer took one of its group in the same instant: all or none", async () => {
    await member("gb-first");
    await member("gb-second");
    const database = opened();
    const first = await database.pool.connect();
    await first.query("BEGIN");
    // The first gateway's statement has taken partition:7, not yet committed.
    expect(await acquireLeases(first, ["partition:7"], "gb-first", TTL)).toEqual({
      leases: [{ name: "partition:7", fence: 1 }],
    });
    // The second sees no holder (its snapshot), takes partition:6, then waits on partition:7's row.
    const second = acquireLeases(database.pool, ["partition:6", "partition:7", "partition:8"], "gb-second", TTL);
    await until(() => waitsOnLock(database.pool, "query LIKE $1", "%INSERT INTO cluster_leases%"));
    await first.query("COMMIT");
    first.release();
    expect(await second).toMatchObject({ held: "partition:7", holder: { owner: "gb-first", fence: 1 } });
    const group = ["partition:6", "partition:7", "partition:8"];
    expect(await heldBy("gb-second", group)).toEqual({});
    expect(await heldBy("gb-first", group)).toEqual({ "partition:7": 1 });
    // What it gave back is free at once for anyone, its fence raised (a take and a release happened).
    const third = await acquireLeases(database.pool, ["partition:6", "partition:8"], "gb-first", TTL);
    expect(third).toEqual({
      leases: [
        { name: "partition:6", fence: 2 },
        { name: "partition:8", fence: 2 },
      ],
    });
  });
});
