// What a partition owner without the global lease (`cluster.owners: "many"`) leaves to the global
// holder (docs/scale-out.md "A fence per partition on every write"): rows of no session found on
// opening (old handled keys, invalid rows) and the sweeps of every session's rows (the run results'
// and the lane rows' prunes). None of them is sent, so none refuses a batch of its partitions' writes.
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { createRunResults } from "../../../src/cluster/run-results.js";
import { ownerLaneClaims } from "../../../src/gateway/owner-lane-claims.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { usePartitionOwners } from "../../support/partition-owners.js";

const { keysOf, range, schema16, openPlain, openOwner } = usePartitionOwners();

/** Stores inbox rows as they were left (by an earlier version, or hand-edited): [key, value, part]. */
async function storeInbox(schema: string, rows: Array<[string, object, number | null]>) {
  const plain = await openPlain(schema);
  for (const [id, value, part] of rows)
    await plain.pool.query("INSERT INTO state_rows (tbl, key, value, part) VALUES ('inbox', $1, $2, $3)", [
      id,
      JSON.stringify(value),
      part,
    ]);
}

/** The inbox rows stored, by key: their part. */
async function inboxRows(pool: pg.Pool) {
  const { rows } = await pool.query<{ key: string; part: number | null }>(
    "SELECT key, part FROM state_rows WHERE tbl = 'inbox' ORDER BY key",
  );
  return Object.fromEntries(rows.map((row) => [row.key, row.part]));
}

describe("a partition owner without the global lease, at open and in its sweeps", () => {
  it("prunes the old handled keys of its partitions and leaves those of no session to the global holder, its own writes unharmed", async () => {
    const schema = await schema16();
    const [key] = keysOf(3);
    // Handled long ago: a key of an earlier version (no session, no part) and one of partition 3.
    await storeInbox(schema, [
      ["legacy:1", { status: "done", at: 1_000 }, null],
      ["old:3", { status: "done", at: 1_000, session: key }, 3],
    ]);
    // Its inbox prunes as it opens: its partition's key goes, the key of no session stays.
    const a = await openOwner(schema, "os-a", range(0, 8));
    await a.state.flush();
    expect(await inboxRows(a.plain.pool)).toEqual({ "legacy:1": null });
    await a.sessions.set(key!, { text: "written after the prune" });
    expect(a.lost).toEqual([]);
    // The global holder's prune takes the key of no session.
    const g = await openOwner(schema, "os-g", range(8, 16), true);
    await g.state.flush();
    expect(await inboxRows(a.plain.pool)).toEqual({});
  });

  it.each([
    { held: "0-7", parts: range(0, 8), left: { "bad:none": null, "bad:12": 12 } },
    { held: "all 16", parts: range(0, 16), left: { "bad:none": null } },
  ])(
    "drops an invalid row of its partitions ($held) as it opens a table, and leaves an invalid row of no session to the global holder",
    async ({ parts, left }) => {
      const schema = await schema16();
      const [key] = keysOf(3);
      const bogus = { status: "bogus", session: key };
      await storeInbox(schema, [
        ["bad:3", bogus, 3],
        ["bad:none", bogus, null],
        ["bad:12", bogus, 12],
      ]);
      const a = await openOwner(schema, "os-a", parts);
      expect(a.inbox.pending()).toEqual([]);
      // A partition another owner holds is never loaded, never touched.
      expect(await inboxRows(a.plain.pool)).toEqual(left);
    },
  );

  it("leaves the run results' prune to the global holder: nothing is sent, nothing is warned", async () => {
    const schema = await schema16();
    const a = await openOwner(schema, "os-a", range(0, 8));
    const [key] = keysOf(3);
    const logger = createMemoryLogger();
    const results = createRunResults({ database: a.database, logger, endBeforeDoneMs: 0 });
    await results.record({ runId: "r-old", sessionKey: key!, status: "ok", queuedAt: 1_000, endedAt: 2_000 });
    results.prune(Date.now());
    await results.close();
    expect(logger.records.filter((record) => record.level === "warn")).toEqual([]);
    expect((await a.plain.pool.query("SELECT run_id FROM run_results")).rows).toEqual([{ run_id: "r-old" }]);
    const g = await openOwner(schema, "os-g", range(8, 16), true);
    const global = createRunResults({ database: g.database, logger, endBeforeDoneMs: 0 });
    global.prune(Date.now());
    await global.close();
    expect((await a.plain.pool.query("SELECT run_id FROM run_results")).rows).toEqual([]);
  });

  it("claims its sessions' send lanes under their partitions' leases, and leaves the lane rows' prune to the global holder", async () => {
    const schema = await schema16();
    const a = await openOwner(schema, "os-a", range(0, 8));
    const [key] = keysOf(3);
    await a.plain.pool.query(
      "INSERT INTO outbox_lanes (lane, holder, fence, until) VALUES ('old-lane', 'gone~1', 1, now() - interval '2 days')",
    );
    let now = 0;
    const logger = createMemoryLogger();
    const holds = ownerLaneClaims(a.database, a.node.incarnation, 180_000, { clock: () => now, logger });
    expect(await holds("telegram:default:1", key!)).toBe(true);
    // An hour on, the next claim would start the prune: on this owner it sends nothing.
    now += 3_600_001;
    expect(await holds("telegram:default:2", key!)).toBe(true);
    const lanes = await a.plain.pool.query("SELECT lane FROM outbox_lanes ORDER BY lane");
    expect(lanes.rows.map((row) => row.lane)).toEqual(["old-lane", "telegram:default:1", "telegram:default:2"]);
    expect(logger.records.filter((record) => record.level === "warn")).toEqual([]);
    expect(a.lost).toEqual([]);
  });
});
