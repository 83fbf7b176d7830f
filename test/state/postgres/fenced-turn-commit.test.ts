// On the gateway's fenced database a turn's batch checks the fences inside its one statement
// (docs/scale-out.md): a stale fence refuses the batch whole (rows, transcript events, workspace
// writes, hand-off deletes), and a takeover waits for a batch in flight.
import { describe, expect, it } from "vitest";
import { FencedOutError } from "../../../src/cluster/lease-sql.js";
import { rowWriterOf } from "../../../src/state/postgres/row-writer.js";
import { postgresWorkspaces } from "../../../src/workspace/postgres-workspace.js";
import { until } from "../../support/gateway-child.js";
import { waitsOnLock } from "../../support/pg-watch.js";
import { freshSchema } from "../../support/postgres.js";
import { TAKEOVER, useTurnCommitTables } from "../../support/turn-commit-tables.js";

const { openFenced, stored } = useTurnCommitTables();

describe("a turn's commit on the gateway's fenced database", () => {
  it("checks the fence inside the batch's one statement: one round trip; a read is one too", async () => {
    const schema = freshSchema();
    const { database, transcripts, sessions, outbox, queries } = await openFenced(schema);
    await transcripts.append("s1", { role: "user", content: "hi", runId: "r1" });
    queries.length = 0;
    await Promise.all([
      transcripts.append("s1", { role: "assistant", content: "hello", runId: "r1" }),
      sessions.set("k", { text: "usage" }),
      outbox.set("r1:reply", { text: "hello" }),
    ]);
    expect(queries).toEqual(["switchboard_batch"]);
    // A read writes nothing, so it needs no fence: its one statement alone (a turn reads the workspace).
    queries.length = 0;
    await postgresWorkspaces(database)("main").read("AGENTS.md");
    // One statement, unfenced: the workspace's batched read (reads asked for together share it).
    expect(queries).toHaveLength(1);
    expect(queries[0]).toMatch(/^SELECT w\.agent, w\.path, w\.content FROM workspace_files/);
    expect(await stored(schema)).toEqual({ messages: ["hi", "hello"], sessions: ["k"], outbox: ["r1:reply"] });
  });

  it("refuses a batch whose fence is stale whole, rows and transcript events, with FencedOutError, and loses the lease", async () => {
    const schema = freshSchema();
    const { plain, transcripts, sessions, outbox, lost } = await openFenced(schema);
    await transcripts.append("s1", { role: "user", content: "hi", runId: "r1" });
    await plain.pool.query(TAKEOVER);
    const writes = [
      transcripts.append("s1", { role: "assistant", content: "lost", runId: "r1" }),
      sessions.set("k", { text: "usage" }),
      outbox.set("r1:reply", { text: "lost" }),
    ];
    for (const write of writes) await expect(write).rejects.toBeInstanceOf(FencedOutError);
    // A batch of appends alone (no row to upsert) is checked all the same.
    await expect(transcripts.append("s1", { role: "user", content: "again" })).rejects.toBeInstanceOf(FencedOutError);
    expect(lost).toEqual([{ name: "schema:writer", fence: 1 }]);
    expect(await stored(schema)).toEqual({ messages: ["hi"], sessions: [], outbox: [] });
  });

  it("refuses a workspace append, a compare-and-set edit and a create whose fence is stale: the files keep their text", async () => {
    const { plain, database } = await openFenced(freshSchema());
    const ws = postgresWorkspaces(database)("main");
    await ws.write("MEMORY.md", "kept\n");
    await plain.pool.query(TAKEOVER);
    await expect(ws.append("MEMORY.md", "lost\n", 1_000)).rejects.toBeInstanceOf(FencedOutError);
    await expect(ws.update("MEMORY.md", () => "lost\n")).rejects.toBeInstanceOf(FencedOutError);
    await expect(ws.create("USER.md", "lost\n")).rejects.toBeInstanceOf(FencedOutError);
    const kept = ["MEMORY.md", "USER.md"].map((file) => postgresWorkspaces(plain)("main").read(file));
    expect(await Promise.all(kept)).toEqual(["kept\n", undefined]);
  });

  it("deletes hand-off rows in the batch's statement, fenced by the writer lease: a stale fence keeps them, a batch of deletes alone too", async () => {
    const { plain, database, sessions } = await openFenced(freshSchema());
    const ids: string[] = [];
    for (const key of ["a", "b", "c"])
      ids.push(
        (
          await plain.pool.query<{ id: string }>(
            "INSERT INTO inbound_handoff (kind, dedupe_key, payload, received_by) VALUES ('hook', $1, '{}', 'gw-x') RETURNING id",
            [key],
          )
        ).rows[0]!.id,
      );
    const left = async () => (await plain.pool.query("SELECT dedupe_key FROM inbound_handoff ORDER BY id")).rows;
    const writer = rowWriterOf(database);
    await Promise.all([sessions.set("k", { text: "taken in" }), writer.dropHandoff(ids[0]!)]);
    expect(await left()).toEqual([{ dedupe_key: "b" }, { dedupe_key: "c" }]);
    await plain.pool.query(TAKEOVER);
    const refused = [sessions.set("k2", { text: "lost" }), writer.dropHandoff(ids[1]!)];
    for (const write of refused) await expect(write).rejects.toBeInstanceOf(FencedOutError);
    await expect(writer.dropHandoff(ids[2]!)).rejects.toBeInstanceOf(FencedOutError);
    expect(await left()).toEqual([{ dedupe_key: "b" }, { dedupe_key: "c" }]);
  });

  it("makes a takeover wait for an in-flight batch, which lands whole; the next batch is refused", async () => {
    const schema = freshSchema();
    const { plain, transcripts, sessions } = await openFenced(schema);
    await sessions.set("k", { text: "first" });
    // Another transaction holds row k: the batch locks the lease row, then waits on k.
    const holder = await plain.pool.connect();
    await holder.query("BEGIN; SELECT 1 FROM state_rows WHERE key = 'k' FOR UPDATE");
    const batch = Promise.all([
      transcripts.append("s1", { role: "user", content: "in flight" }),
      sessions.set("k", { text: "second" }),
    ]);
    // (The batch's text is cut at track_activity_query_size in pg_stat_activity: its start names it.)
    await until(() => waitsOnLock(plain.pool, "query LIKE $1", "%unnest($1::text[], $2::text[], $3::jsonb[]%"));
    const taker = await plain.pool.connect();
    const takerPid = (await taker.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    const takeover = taker.query(TAKEOVER);
    await until(() => waitsOnLock(plain.pool, "pid = $1", takerPid));
    await holder.query("COMMIT");
    holder.release();
    // The order on the server, not the order the two sockets' answers reach this process: when the
    // takeover's statement has returned, the batch it waited for is committed, whole.
    await takeover;
    taker.release();
    const { rows } = await plain.pool.query<{ value: { text: string } }>(
      "SELECT value FROM state_rows WHERE tbl = 'sessions:main' AND key = 'k'",
    );
    expect(rows.map((row) => row.value.text)).toEqual(["second"]);
    await batch;
    await expect(sessions.set("k", { text: "stale" })).rejects.toBeInstanceOf(FencedOutError);
    expect(await stored(schema)).toEqual({ messages: ["in flight"], sessions: ["k"], outbox: [] });
  });

  it("runs a snapshot transaction read-only: a write inside it is refused, and a snapshot that is also single is an error", async () => {
    const schema = freshSchema();
    const { database, plain } = await openFenced(schema);
    const write = "INSERT INTO state_rows (tbl, key, value) VALUES ('outbox', 'sneaked', '{}'::jsonb)";
    const inSnapshot = database.transaction((client) => client.query(write), { snapshot: true });
    await expect(inSnapshot).rejects.toThrow(/read-only transaction/);
    // Single would skip BEGIN (so READ ONLY) and the fence with it: refused before anything runs.
    const single = database.transaction((client) => client.query(write), { snapshot: true, single: true });
    await expect(single).rejects.toThrow(
      "a snapshot transaction runs several statements: snapshot and single exclude each other",
    );
    const { rows } = await plain.pool.query("SELECT key FROM state_rows WHERE key = 'sneaked'");
    expect(rows).toEqual([]);
  });
});
