// On PostgreSQL a turn's transcript events and the state rows written in the same step (session row,
// outbox item, inbox mark) are one transaction: the transcripts share the state port's group commit.
// A batch whose one statement fails leaves neither the rows nor the events; one that commits has both.
// On the gateway's fenced database the batch checks the writer lease's fence inside its one statement.
import { afterEach, describe, expect, it } from "vitest";
import { FencedOutError } from "../../../src/cluster/lease-sql.js";
import { parseConfig } from "../../../src/config/index.js";
import { createGatewayCluster } from "../../../src/gateway/core-cluster.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { createPostgresTranscripts } from "../../../src/sessions/transcripts/postgres-transcripts.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../../src/state/postgres/database.js";
import { applyBatch } from "../../../src/state/postgres/batch-sql.js";
import { openPostgresState } from "../../../src/state/postgres/postgres-state.js";
import type { TableSpec } from "../../../src/state/state-port.js";
import { rowWriterOf } from "../../../src/state/postgres/row-writer.js";
import { postgresWorkspaces } from "../../../src/workspace/postgres-workspace.js";
import { until } from "../../support/gateway-child.js";
import { countQueries, waitsOnLock } from "../../support/pg-watch.js";
import { freshSchema, usePostgres } from "../../support/postgres.js";

const db = usePostgres();
const opened: PostgresDatabase[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((database) => database.close()));
});

const spec = (name: string): TableSpec<{ text: string }> => ({
  name,
  path: `${name}.json`,
  what: name,
  check: (_key, row) => ({ value: row as { text: string } }),
  invalidRows: "keep",
});

/** The state port and one agent's transcripts on one database of a fresh schema, counting its transactions. */
async function openBoth(schema = freshSchema()) {
  const logger = createMemoryLogger();
  const opening = await openPostgresDatabase({ url: db.url, schema, logger, probeEveryMs: 0 });
  opened.push(opening);
  const transactions: Array<"one statement" | "BEGIN/COMMIT"> = [];
  const database: PostgresDatabase = {
    ...opening,
    transaction: (fn, options) => {
      transactions.push(options?.single ? "one statement" : "BEGIN/COMMIT");
      return opening.transaction(fn, options);
    },
  };
  const state = openPostgresState(database, { logger });
  const transcripts = createPostgresTranscripts({ database, agentId: "main" });
  const [sessions, outbox] = await Promise.all([state.table(spec("sessions:main")), state.table(spec("outbox"))]);
  return { database, state, transcripts, sessions, outbox, transactions };
}

/** What the schema holds: the transcript's messages and the rows of both tables. */
async function stored(schema: string) {
  const { transcripts, sessions, outbox } = await openBoth(schema);
  const page = await transcripts.readTail("s1", { limit: 100, includeTools: true });
  return { messages: page.messages.map((m) => m.content), sessions: [...sessions.keys()], outbox: [...outbox.keys()] };
}

describe("a turn's commit on PostgreSQL", () => {
  it("stores the transcript events and the rows written in one step together, in one statement", async () => {
    const schema = freshSchema();
    const { transcripts, sessions, outbox, state, transactions } = await openBoth(schema);
    await transcripts.append("s1", { role: "user", content: "hi", runId: "r1" });
    transactions.length = 0;
    await Promise.all([
      transcripts.append("s1", { role: "assistant", content: "hello", runId: "r1" }),
      transcripts.append("s1", { role: "assistant", content: "again", runId: "r1" }),
      sessions.set("k", { text: "usage" }),
      outbox.set("r1:reply", { text: "hello" }),
    ]);
    // No BEGIN and COMMIT: one statement is atomic on its own.
    expect(transactions).toEqual(["one statement"]);
    await state.close();
    expect(await stored(schema)).toEqual({ messages: ["hi", "hello", "again"], sessions: ["k"], outbox: ["r1:reply"] });
  });

  it("leaves neither the rows nor the events when one statement of the batch fails", async () => {
    const schema = freshSchema();
    const { database, transcripts, sessions, outbox } = await openBoth(schema);
    await transcripts.append("s1", { role: "user", content: "hi", runId: "r1" });
    // A real failure inside the server: a trigger refuses the outbox row "boom".
    await database.pool.query(`
      CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN IF NEW.key = 'boom' THEN RAISE EXCEPTION 'refused %', NEW.key; END IF; RETURN NEW; END $$;
      CREATE TRIGGER refuse_boom BEFORE INSERT ON state_rows FOR EACH ROW EXECUTE FUNCTION refuse_boom();`);
    const writes = [
      transcripts.append("s1", { role: "assistant", content: "lost", runId: "r1" }),
      sessions.set("k", { text: "usage" }),
      outbox.set("boom", { text: "lost" }),
    ];
    for (const write of writes) await expect(write).rejects.toThrow("refused boom");
    expect(await stored(schema)).toEqual({ messages: ["hi"], sessions: [], outbox: [] });
  });

  it("keeps one transcript's order across batches, and a row removed and written again in the same batch", async () => {
    const schema = freshSchema();
    const { transcripts, sessions, state } = await openBoth(schema);
    await sessions.set("k", { text: "first" });
    const writes = [transcripts.append("s1", { role: "user", content: "1" })];
    writes.push(sessions.delete("k"), sessions.set("k", { text: "again" }));
    // Queued while the batch above commits: the next batch.
    await Promise.resolve();
    writes.push(transcripts.append("s1", { role: "assistant", content: "2" }));
    writes.push(transcripts.append("s1", { role: "user", content: "3" }));
    await Promise.all(writes);
    await state.close();
    const page = await stored(schema);
    expect(page.messages).toEqual(["1", "2", "3"]);
    expect(page.sessions).toEqual(["k"]);
  });

  it("serves a warm transcript's newest messages from memory, the same as the rows, appends and archives included", async () => {
    const { transcripts, transactions } = await openBoth();
    await transcripts.append("s1", { role: "user", content: "1" });
    expect((await transcripts.recent("s1", 10)).map((m) => m.content)).toEqual(["1"]);
    // Appended while a read of a cold transcript runs: that read is not kept, so nothing is doubled or lost.
    const [cold] = await Promise.all([
      transcripts.recent("s2", 10),
      transcripts.append("s2", { role: "user", content: "a" }),
    ]);
    expect(cold.length).toBeLessThanOrEqual(1);
    await transcripts.append("s1", { role: "assistant", content: "2" });
    transactions.length = 0;
    const warm = await transcripts.recent("s1", 10);
    expect(transactions).toEqual([]);
    expect(warm).toEqual((await transcripts.readTail("s1", { limit: 10, includeTools: true })).messages);
    expect((await transcripts.recent("s2", 10)).map((m) => m.content)).toEqual(["a"]);
    await transcripts.remove("s1");
    expect(await transcripts.recent("s1", 10)).toEqual([]);
  });

  it("stores a string cut through an emoji and a NUL as U+FFFD, without failing the other writes of the batch", async () => {
    const schema = freshSchema();
    const { transcripts, sessions, outbox, state } = await openBoth(schema);
    const cut = "cut emoji \u{1F600}".slice(0, -1); // a lone high surrogate
    await Promise.all([
      transcripts.append("s1", { role: "assistant", content: cut, runId: "r1" }),
      sessions.set("k", { text: "nul \u0000 and a low \udc00 alone" }),
      // Written by a person: a backslash and "u0000" are text, not an escape, and stay as they are.
      outbox.set("r1:reply", { text: "C:\\u0000dir \u{1F600}" }),
    ]);
    await state.close();
    const { transcripts: reread, sessions: rows, outbox: items } = await openBoth(schema);
    const page = await reread.readTail("s1", { limit: 10, includeTools: true });
    expect(page.messages.map((m) => m.content)).toEqual(["cut emoji \ufffd"]);
    expect(rows.get("k")).toEqual({ text: "nul \ufffd and a low \ufffd alone" });
    expect(items.get("r1:reply")).toEqual({ text: "C:\\u0000dir \u{1F600}" });
  });

  it("appends a batch's events once when the same batch runs again (a retry after a COMMIT whose answer was lost)", async () => {
    const schema = freshSchema();
    const { database, transcripts } = await openBoth(schema);
    await transcripts.append("s1", { role: "user", content: "hi" });
    const event = (eid: string, content: string) => ({
      agent: "main",
      name: "s1",
      header: "{}",
      eid,
      bytes: content.length,
      at: Date.now(),
      tool: false,
      json: JSON.stringify({ role: "assistant", content, timestamp: Date.now() }),
      part: null,
    });
    const batch = [
      event("00000000-0000-4000-8000-000000000001", "one"),
      event("00000000-0000-4000-8000-000000000002", "two"),
    ];
    const row = { tbl: "outbox", key: "r1:reply", json: '{"text":"two"}', part: null, moved: false };
    await database.transaction((client) => applyBatch(client, batch, [row]), { single: true });
    await database.transaction((client) => applyBatch(client, batch, [row]), { single: true });
    const { transcripts: reread } = await openBoth(schema);
    const page = await reread.readTail("s1", { limit: 10 });
    expect(page.messages.map((m) => m.content)).toEqual(["hi", "one", "two"]);
  });
});

/** The state port and transcripts on the database as the gateway guards it: it holds `schema:writer`. */
async function openFenced(schema: string) {
  const logger = createMemoryLogger();
  const plain = await openPostgresDatabase({ url: db.url, schema, logger, probeEveryMs: 0 });
  const lost: unknown[] = [];
  // Beats far apart: a beat is a query of its own, and the counts below are the batches' alone.
  const { config } = parseConfig({
    gateway: { nodeId: "fb-writer" },
    cluster: { leaseTtlMs: 180_000, heartbeatMs: 60_000 },
  });
  const cluster = createGatewayCluster({ config, logger, port: 0, onFencedOut: (lease) => lost.push(lease) });
  const database = await cluster.guard(plain);
  opened.push(database);
  const queries = countQueries(plain.pool);
  const state = openPostgresState(database, { logger });
  const transcripts = createPostgresTranscripts({ database, agentId: "main" });
  const [sessions, outbox] = await Promise.all([state.table(spec("sessions:main")), state.table(spec("outbox"))]);
  return { plain, database, transcripts, sessions, outbox, lost, queries };
}

/** Another gateway taking the writer lease over: an UPDATE of its row, raising the fence. */
const TAKEOVER = "UPDATE cluster_leases SET owner = 'fb-other', fence = fence + 1 WHERE name = 'schema:writer'";

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
});
