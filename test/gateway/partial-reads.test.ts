// A gateway core holding only some partitions (`cluster.owners: "many"`, the global holder;
// docs/scale-out.md "Reads in many mode") on a real PostgreSQL schema of 16 partitions: another
// writer (its own state port, opened for the other partitions, as another gateway's) stores
// sessions the core's image never loads. The core's methods must read every partition's sessions
// from the committed rows, and refuse a write of another's session naming its owner, changing nothing.
import { describe, expect, it } from "vitest";
import { acquireLeases, joinMember } from "../../src/cluster/lease-sql.js";
import { partitionLeases } from "../../src/cluster/cluster-status.js";
import { parseConfig } from "../../src/config/index.js";
import { dispatchRequest } from "../../src/gateway/dispatch-request.js";
import { createMemoryLogger } from "../../src/logger.js";
import { partOf } from "../../src/routing/partition.js";
import { openAgentSessions } from "../../src/sessions/agent-sessions.js";
import { postgresTranscriptsOpener } from "../../src/sessions/transcripts/postgres-transcripts.js";
import { type PostgresDatabase, openPostgresDatabase } from "../../src/state/postgres/database.js";
import { openPostgresState } from "../../src/state/postgres/postgres-state.js";
import { closersAfterEach } from "../support/closed-after-each.js";
import { freshSchema, usePostgres } from "../support/postgres.js";
import { createTestCore, homeForTest } from "../support/test-core.js";

const db = usePostgres();
const logger = createMemoryLogger();
const closing = closersAfterEach();

const COUNT = 16;
const HELD = [0, 1, 2, 3, 4, 5, 6, 7];
const OTHER = [8, 9, 10, 11, 12, 13, 14, 15];
const MINUTE = 60_000;
const { config } = parseConfig({});
const held = (key: string) => HELD.includes(partOf(key, COUNT));
const dm = (i: number) => `agent:main:telegram:dm:${i}`;
const KEYS = Array.from({ length: 40 }, (_, i) => dm(i));
/** Three sessions of this core's partitions, three of the other gateway's. */
const OWN = KEYS.filter(held).slice(0, 3);
const FOREIGN = KEYS.filter((key) => !held(key)).slice(0, 3);

async function openDatabase(schema: string): Promise<PostgresDatabase> {
  const database = await openPostgresDatabase({ url: db.url, schema, logger, probeEveryMs: 0 });
  closing.push(() => database.close());
  return database;
}

/** A 16-partition schema whose partitions 8-15 are held by gateway "gw-b", which stored FOREIGN's sessions and a transcript. */
async function schemaOfTwo(now: number) {
  const schema = freshSchema();
  await (await openDatabase(schema)).pool.query("UPDATE cluster_settings SET value = $1 WHERE name = 'partitions'", [
    String(COUNT),
  ]);
  const database = await openDatabase(schema);
  const member = { nodeId: "gw-b", incarnation: "gw-b-1", host: "b", pid: 1, port: 1, lockKey: "1" };
  await joinMember(database.pool, member);
  const names = partitionLeases(COUNT).filter((_, n) => OTHER.includes(n));
  expect(await acquireLeases(database.pool, names, member.incarnation, 60_000)).toHaveProperty("leases");
  const state = openPostgresState(database, { logger, parts: OTHER });
  const other = await openAgentSessions({
    agentId: "main",
    storePath: "/nonexistent/agents/main/sessions/sessions.json",
    session: config.session,
    logger,
    state,
    openTranscripts: postgresTranscriptsOpener(database),
  });
  for (const [i, key] of FOREIGN.entries())
    await other.store.patch(key, () => ({
      sessionId: `s-b-${i}`,
      updatedAt: now - (2 * i + 1) * MINUTE,
      label: `b${i}`,
    }));
  const entry = other.store.get(FOREIGN[0]!)!;
  for (let i = 0; i < 5; i++)
    await other.transcripts.append(
      entry.sessionId,
      { role: i % 2 ? "assistant" : "user", content: `message ${i}`, timestamp: now + i },
      { sessionKey: FOREIGN[0]! },
    );
  await other.transcripts.close();
  await state.close();
  return database;
}

/** The core holding partitions 0-7 of that schema, with OWN's sessions in its image. */
async function partialCore() {
  const now = Date.now();
  const database = await schemaOfTwo(now);
  const home = await homeForTest("partial-reads");
  const state = openPostgresState(database, { logger, parts: HELD });
  const core = await createTestCore(config, home, {
    state,
    openTranscripts: postgresTranscriptsOpener(database),
    partial: { database, holds: held },
  });
  closing.push(() => core.stop(0));
  const { store } = await core.sessions.forAgent("main");
  for (const [i, key] of OWN.entries())
    await store.patch(key, () => ({ sessionId: `s-a-${i}`, updatedAt: now - 2 * (i + 1) * MINUTE, label: `a${i}` }));
  await state.flush();
  let id = 0;
  const call = async (method: string, params: unknown) => {
    const answer = await dispatchRequest(core, { type: "req", id: String(++id), method, params }, { client: "test" });
    return answer.ok ? { ok: true, payload: answer.payload as Record<string, unknown> } : answer;
  };
  const payload = async (method: string, params: unknown) => {
    const answer = await call(method, params);
    if (!answer.ok) throw new Error(`${method} failed: ${JSON.stringify(answer)}`);
    return answer.payload as Record<string, unknown>;
  };
  return { core, database, call, payload };
}

const keysOf = (answer: Record<string, unknown>) => (answer.sessions as Array<{ key: string }>).map((s) => s.key);
/** Every session, newest first: own and foreign alternate (own at 2, 4, 6 minutes ago; foreign at 1, 3, 5). */
const NEWEST_FIRST = [FOREIGN[0], OWN[0], FOREIGN[1], OWN[1], FOREIGN[2], OWN[2]];

describe("a core holding only some partitions", () => {
  it("lists and resolves every partition's sessions from the committed rows, with filters, limits and labels", async () => {
    expect(OWN).toHaveLength(3);
    expect(FOREIGN).toHaveLength(3);
    const { payload } = await partialCore();
    expect(keysOf(await payload("sessions.list", {}))).toEqual(NEWEST_FIRST);
    expect(keysOf(await payload("sessions.list", { limit: 3 }))).toEqual(NEWEST_FIRST.slice(0, 3));
    expect(keysOf(await payload("sessions.list", { activeMinutes: 4 }))).toEqual(NEWEST_FIRST.slice(0, 3));
    expect(keysOf(await payload("sessions.list", { label: "b2" }))).toEqual([FOREIGN[2]]);
    expect(keysOf(await payload("sessions.list", { search: "a1" }))).toEqual([OWN[1]]);
    expect(await payload("sessions.resolve", { label: "b1" })).toEqual({ ok: true, key: FOREIGN[1] });
    expect(await payload("sessions.resolve", { key: FOREIGN[2] })).toEqual({ ok: true, key: FOREIGN[2] });
    expect(await payload("sessions.resolve", { sessionId: "s-a-0" })).toEqual({ ok: true, key: OWN[0] });
  });

  it("reads another gateway's session: its transcript page, its panel naming the owner, and every session in status", async () => {
    const { payload } = await partialCore();
    const history = await payload("chat.history", { sessionKey: FOREIGN[0], limit: 3 });
    expect(history).toMatchObject({ sessionKey: FOREIGN[0], sessionId: "s-b-0", hasMore: true });
    expect((history.messages as Array<{ content: string }>).map((m) => m.content)).toEqual([
      "message 2",
      "message 3",
      "message 4",
    ]);
    const panel = await payload("sessions.get", { key: FOREIGN[0] });
    expect(panel).toMatchObject({ key: FOREIGN[0], exists: true, ownedBy: "gw-b", busy: false, activeRuns: [] });
    expect(panel.session).toMatchObject({ sessionId: "s-b-0", label: "b0" });
    expect(panel.context).toMatchObject({ messages: 5 });
    const own = await payload("sessions.get", { key: OWN[1] });
    expect(own).toMatchObject({ exists: true, session: { label: "a1" } });
    expect(own).not.toHaveProperty("ownedBy");
    const status = await payload("status", {});
    expect(status.stores).toEqual([expect.objectContaining({ agentId: "main", sessions: 6, sessionsHeld: 3 })]);
  });

  it("refuses a write of another gateway's session naming its owner and changes nothing; its own session's patch works as before, its label unique across partitions", async () => {
    const { call, payload, database, core } = await partialCore();
    const stored = async (key: string) =>
      (await database.pool.query("SELECT value FROM state_rows WHERE tbl = 'sessions:main' AND key = $1", [key]))
        .rows[0]?.value;
    const before = await stored(FOREIGN[1]!);
    const part = partOf(FOREIGN[1]!, COUNT);
    const refusal = (method: string) => ({
      ok: false,
      error: {
        code: "UNAVAILABLE",
        message: `session ${FOREIGN[1]} is owned by gateway gw-b (it holds partition ${part}); this core has no peer call to forward ${method} to it`,
      },
    });
    expect(await call("sessions.patch", { key: FOREIGN[1], label: "taken" })).toMatchObject(refusal("sessions.patch"));
    expect(await call("sessions.reset", { key: FOREIGN[1] })).toMatchObject(refusal("sessions.reset"));
    expect(await call("sessions.delete", { key: FOREIGN[1] })).toMatchObject(refusal("sessions.delete"));
    expect(await call("chat.abort", { sessionKey: FOREIGN[1] })).toMatchObject(refusal("chat.abort"));
    expect(await call("subagents.stop", { sessionKey: FOREIGN[1] })).toMatchObject(refusal("subagents.stop"));
    const tool = { tool: "sessions_list", sessionKey: FOREIGN[1] };
    expect(await call("tools.invoke", tool)).toMatchObject(refusal("tools.invoke"));
    const delivered = { message: "hi", sessionKey: FOREIGN[1], deliver: true };
    expect(await call("agent", delivered)).toMatchObject(refusal("agent"));
    expect(await stored(FOREIGN[1]!)).toEqual(before);
    // A run this core runs is aborted here, whatever session the abort names.
    core.runs.create("run-a", OWN[0]!);
    expect(await call("chat.abort", { sessionKey: FOREIGN[1], runId: "run-a" })).toMatchObject({
      ok: true,
      payload: { aborted: ["run-a"] },
    });
    // A label is unique among the agent's sessions of every partition, not only among those of the image.
    expect(await call("sessions.patch", { key: OWN[0], label: "b0" })).toMatchObject({
      ok: false,
      error: { code: "INVALID_REQUEST", message: `label already in use: b0 (${FOREIGN[0]})` },
    });
    const patched = await payload("sessions.patch", { key: OWN[0], label: "renamed" });
    expect(patched).toMatchObject({ ok: true, key: OWN[0], entry: { label: "renamed", sessionId: "s-a-0" } });
    expect(await stored(OWN[0]!)).toMatchObject({ label: "renamed" });
    expect(keysOf(await payload("sessions.list", { label: "renamed" }))).toEqual([OWN[0]]);
  });

  it("answers agent.wait for a run another gateway's inbox holds (drained from the hand-off inbox there), once its end is stored", async () => {
    const schema = freshSchema();
    const state = { backend: "postgres", postgres: { url: db.url, schema, poolSize: 4 } };
    const core = await createTestCore(parseConfig({ state }).config, await homeForTest("partial-wait"), {
      partial: { database: await openDatabase(schema), holds: () => false },
    });
    closing.push(() => core.stop(0));
    const pool = (await openDatabase(schema)).pool;
    const row = { status: "pending", seq: 0, runId: "run-b", receivedAt: Date.now(), sessionKey: FOREIGN[0] };
    await pool.query("INSERT INTO state_rows (tbl, key, value) VALUES ('inbox', 'client:run-b', $1)", [row]);
    const wait = (runId: string, timeoutMs: number) =>
      dispatchRequest(
        core,
        { type: "req", id: runId, method: "agent.wait", params: { runId, timeoutMs } },
        { client: "t" },
      );
    expect(await wait("run-b", 0)).toMatchObject({
      ok: true,
      payload: { status: "timeout", error: expect.stringContaining("still queued") },
    });
    expect(await wait("run-none", 0)).toMatchObject({ ok: false, error: { code: "NOT_FOUND" } });
    const ended = wait("run-b", 20_000);
    await pool.query(
      `INSERT INTO run_results (run_id, session_key, status, text, queued_at, ended_at) VALUES ('run-b', $1, 'ok', 'done on gw-b', now(), now())`,
      [FOREIGN[0]],
    );
    expect(await ended).toMatchObject({ ok: true, payload: { runId: "run-b", status: "ok", text: "done on gw-b" } });
  });
});
