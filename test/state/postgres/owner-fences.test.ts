// Partition owners that do not hold the global lease (`cluster.owners: "many"`, docs/scale-out.md
// "A fence per partition on every write"): two owners of one 16-partition schema, each a real
// ClusterNode on its own pool holding a disjoint set of partition leases and NOT `schema:writer`,
// each writing through `fenced(database, node, { global: false })`. Their writes carry only their
// partitions' leases, commit side by side, refuse a row of no session before sending it, and a
// partition taken over refuses only its own writes.
import { describe, expect, it } from "vitest";
import { StoredTurnSchema } from "../../../src/agents/stored-turn.js";
import { storeHandoff } from "../../../src/cluster/handoff-sql.js";
import { FencedOutError } from "../../../src/cluster/lease-sql.js";
import { partOf } from "../../../src/routing/partition.js";
import { GlobalOnlyWriteError } from "../../../src/state/global-only-write-error.js";
import { rowWriterOf } from "../../../src/state/postgres/row-writer.js";
import { postgresWorkspaces } from "../../../src/workspace/postgres-workspace.js";
import type { PartRow } from "../../support/part-tables.js";
import { usePartitionOwners } from "../../support/partition-owners.js";

const { COUNT, range, keysOf, schema16, message, openOwner, openPort } = usePartitionOwners();
type Owner = Awaited<ReturnType<typeof openOwner>>;

/** A turn's writes of session `key` on `owner`: its row, a handled message and a pending one, a reply, a transcript line, a workspace append. */
async function turnOf(owner: Owner, key: string, i: number) {
  const handled = await owner.inbox.claim(`telegram:default:${key}:${i}`, message(key, `${i}`), { session: key });
  const pending = await owner.inbox.claim(`telegram:default:${key}:${i + 1}`, message(key, `${i + 1}`), {
    session: key,
  });
  expect([handled.status, pending.status]).toEqual(["new", "new"]);
  await Promise.all([
    owner.inbox.complete(`telegram:default:${key}:${i}`),
    owner.sessions.set(key, { text: `row of ${key}` }),
    owner.outbox.set(`reply:${key}`, { session: key, text: "hello" }),
    owner.transcripts.append(`t-${i}`, { role: "user", content: key }, { sessionId: `t-${i}`, sessionKey: key }),
    postgresWorkspaces(owner.database)("main", key).append("MEMORY.md", `${key}\n`, 1_000_000),
  ]);
}

describe("partition owners without the global lease", () => {
  it("write sessions, inbox entries, outbox items, transcripts and workspace appends side by side: every write commits under its partition's lease alone", async () => {
    const schema = await schema16();
    const a = await openOwner(schema, "of-a", range(0, 8));
    const b = await openOwner(schema, "of-b", range(8, 16));
    const keys = range(0, COUNT).flatMap((part) => keysOf(part));
    await Promise.all(keys.map((key, i) => turnOf(partOf(key, COUNT) < 8 ? a : b, key, i * 10)));
    const { rows } = await a.plain.pool.query<{ tbl: string; n: number; parts: number; none: number }>(
      `SELECT tbl, count(*)::int AS n, count(DISTINCT part)::int AS parts, count(*) FILTER (WHERE part IS NULL)::int AS none
       FROM state_rows GROUP BY tbl ORDER BY tbl`,
    );
    // Every row (the handled messages' dedupe rows included) carries its session's partition.
    expect(rows).toEqual([
      { tbl: "inbox", n: keys.length * 2, parts: COUNT, none: 0 },
      { tbl: "outbox", n: keys.length, parts: COUNT, none: 0 },
      { tbl: "sessions:main", n: keys.length, parts: COUNT, none: 0 },
    ]);
    const events = await a.plain.pool.query("SELECT count(*)::int AS n FROM transcript_events");
    expect(events.rows[0].n).toBe(keys.length);
    const memory = await postgresWorkspaces(a.plain)("main").read("MEMORY.md");
    expect(memory?.split("\n").filter(Boolean).sort()).toEqual([...keys].sort());
    // Neither holds the writer lease, and neither lost a lease.
    expect(await a.plain.pool.query("SELECT owner FROM cluster_leases WHERE name = 'schema:writer'")).toHaveProperty(
      "rowCount",
      0,
    );
    expect([a.lost, b.lost]).toEqual([[], []]);
  });

  it("refuses a row of no session before sending it, naming the table and row, and a write that names no partition", async () => {
    const schema = await schema16();
    const a = await openOwner(schema, "of-a", range(0, 8));
    expect(() => a.cron.set("nightly", { text: "a job" })).toThrow(
      'state table "cron-jobs": row "nightly" belongs to no session and was not written: rows of no session are written by the global holder only',
    );
    expect(() => a.outbox.set("item-none", { text: "of no session" })).toThrow(GlobalOnlyWriteError);
    await expect(postgresWorkspaces(a.database)("main").write("AGENTS.md", "starter")).rejects.toThrow(
      /workspace of agent "main": a write of no session: rows of no session are written by the global holder only/,
    );
    let sent = false;
    const unnamed = a.database.transaction(async (client) => {
      sent = true;
      await client.query("DELETE FROM state_rows WHERE tbl = 'cron-jobs'");
    });
    await expect(unnamed).rejects.toThrow(GlobalOnlyWriteError);
    expect(sent).toBe(false);
    // The writes of its partitions still commit.
    const [key] = keysOf(3);
    await a.sessions.set(key!, { text: "still written" });
    const { rows } = await a.plain.pool.query("SELECT tbl, key, part FROM state_rows ORDER BY tbl");
    expect(rows).toEqual([{ tbl: "sessions:main", key, part: 3 }]);
  });

  it("after another owner takes one partition over, refuses the old owner's writes of it (FencedOutError naming partition:<n>) while its other partitions commit", async () => {
    const schema = await schema16();
    const a = await openOwner(schema, "of-a", range(0, 8));
    const b = await openOwner(schema, "of-b", range(8, 16));
    const [lostKey] = keysOf(3);
    const [keptKey] = keysOf(5);
    await a.sessions.set(lostKey!, { text: "before" });
    // A pauses past its lease (its lease of partition 3 expires); B takes partition 3 (fence + 1).
    await a.plain.pool.query(
      "UPDATE cluster_leases SET expires_at = now() - interval '1 second' WHERE name = 'partition:3'",
    );
    expect(await b.node.acquire("partition:3")).toMatchObject({ lease: { name: "partition:3", fence: 2 } });
    const refused = a.sessions.set(lostKey!, { text: "lost" });
    await expect(refused).rejects.toBeInstanceOf(FencedOutError);
    await expect(refused).rejects.toThrow(/partition:3/);
    expect(a.lost.map((lease) => lease.name)).toEqual(["partition:3"]);
    await a.sessions.set(keptKey!, { text: "kept" });
    // B reopens its port with partition 3 (as a core does when its held set changes) and writes it.
    const reopened = await openPort(b.database, [3, ...range(8, 16)]);
    expect(reopened.sessions.get(lostKey!)).toEqual({ text: "before" });
    await reopened.sessions.set(lostKey!, { text: "taken over" });
    const { rows } = await a.plain.pool.query<{ key: string; value: PartRow }>(
      "SELECT key, value FROM state_rows WHERE tbl = 'sessions:main' ORDER BY key",
    );
    expect(Object.fromEntries(rows.map((row) => [row.key, row.value.text]))).toEqual({
      [lostKey!]: "taken over",
      [keptKey!]: "kept",
    });
  });

  it("keeps a handled message's dedupe row in its session's partition: the owner that loads it finds it, and a receiving gateway's hand-off store sees a handled turn's", async () => {
    const schema = await schema16();
    const a = await openOwner(schema, "of-a", range(0, 8));
    const [key] = keysOf(6);
    const dedupeKey = `telegram:default:${key}:77`;
    await a.inbox.claim(dedupeKey, message(key!, "77"), { session: key });
    await a.inbox.complete(dedupeKey);
    // A hook's turn, handled: its row keeps its run id (what the hand-off store compares).
    const turn = { source: "hook", sessionKey: key!, text: "x", owner: false, provenance: { kind: "hook" }, input: {} };
    await a.inbox.claimTurn("hook:h1", StoredTurnSchema.parse(turn), { runId: "run-h1" });
    await a.inbox.complete("hook:h1");
    const stored = await a.plain.pool.query(
      "SELECT key, part, value->>'status' AS status FROM state_rows WHERE tbl = 'inbox' ORDER BY key",
    );
    expect(stored.rows).toEqual([
      { key: "hook:h1", part: 6, status: "done" },
      { key: dedupeKey, part: 6, status: "done" },
    ]);
    // The owner of partition 6, opening again, knows both keys: a redelivery is a duplicate.
    const again = await openPort(a.database, range(0, 8));
    expect(await again.inbox.claim(dedupeKey, message(key!, "77"), { session: key })).toEqual({ status: "done" });
    expect(again.inbox.knows("hook:h1")).toBe(true);
    // A port of the other partitions does not load them.
    const other = await openPort(a.database, range(8, 16));
    expect([other.inbox.knows(dedupeKey), other.inbox.knows("hook:h1")]).toEqual([false, false]);
    // A receiving gateway's store (handoff_store with the inbox cutoff) finds the handled turn and stores nothing.
    const handoff = { kind: "hook" as const, dedupeKey: "hook:h1", runId: "run-2", payload: {}, receivedBy: "gw-r" };
    expect(await storeHandoff(a.plain.pool, schema, handoff, Date.now() - 60_000)).toMatchObject({ status: "taken" });
    expect((await a.plain.pool.query("SELECT 1 FROM inbound_handoff")).rowCount).toBe(0);
  });

  it("deletes a drained hand-off row under its partition's lease; a delete or an append that names no partition is refused before it is queued, so the batch of the others commits", async () => {
    const schema = await schema16();
    const a = await openOwner(schema, "of-a", range(0, 8));
    const insert = (key: string) =>
      a.plain.pool.query<{ id: string }>(
        "INSERT INTO inbound_handoff (kind, dedupe_key, payload, received_by) VALUES ('inbox-entry', $1, '{}', 'gw-x') RETURNING id",
        [key],
      );
    const [ofPart, ofNone] = [(await insert("p")).rows[0]!.id, (await insert("n")).rows[0]!.id];
    const [key] = keysOf(4);
    const writer = rowWriterOf(a.database);
    // One synchronous step: one batch, were they queued.
    const step = [
      writer.dropHandoff(ofPart, 4),
      a.sessions.set(key!, { text: "taken in" }),
      writer.dropHandoff(ofNone),
      a.transcripts.append("t-none", { role: "user", content: "of no session" }),
    ];
    const settled = await Promise.allSettled(step);
    expect(settled.map((result) => result.status)).toEqual(["fulfilled", "fulfilled", "rejected", "rejected"]);
    for (const result of settled.slice(2))
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(GlobalOnlyWriteError);
    const left = await a.plain.pool.query("SELECT dedupe_key FROM inbound_handoff");
    expect(left.rows).toEqual([{ dedupe_key: "n" }]);
    const stored = await a.plain.pool.query("SELECT key, part FROM state_rows");
    expect(stored.rows).toEqual([{ key, part: 4 }]);
    expect((await a.plain.pool.query("SELECT 1 FROM transcripts")).rowCount).toBe(0);
  });

  it("on the global holder, carries the writer lease on every write: its rows of no session commit, and once another takes the writer lease its partitions' writes are refused too", async () => {
    const schema = await schema16();
    const g = await openOwner(schema, "of-g", range(0, 8), true);
    const b = await openOwner(schema, "of-b", range(8, 16));
    const [gKey] = keysOf(2);
    const [bKey] = keysOf(12);
    await Promise.all([
      g.cron.set("nightly", { text: "a job" }),
      g.sessions.set(gKey!, { text: "of g" }),
      b.sessions.set(bKey!, { text: "of b" }),
    ]);
    // g pauses past its lease; the writer lease goes to b (fence + 1): g's partition 2 is still its own.
    await g.plain.pool.query(
      "UPDATE cluster_leases SET expires_at = now() - interval '1 second' WHERE name = 'schema:writer'",
    );
    expect(await b.node.acquire("schema:writer")).toHaveProperty("lease");
    const refused = g.sessions.set(gKey!, { text: "lost" });
    await expect(refused).rejects.toBeInstanceOf(FencedOutError);
    await expect(refused).rejects.toThrow(/schema:writer/);
    await b.sessions.set(bKey!, { text: "b goes on" });
    const { rows } = await g.plain.pool.query<{ key: string; value: PartRow }>(
      "SELECT key, value FROM state_rows ORDER BY key",
    );
    expect(Object.fromEntries(rows.map((row) => [row.key, row.value.text]))).toEqual({
      nightly: "a job",
      [gKey!]: "of g",
      [bKey!]: "b goes on",
    });
  });
});
