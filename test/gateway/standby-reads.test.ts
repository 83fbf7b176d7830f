// The reads a standby answers from PostgreSQL (src/gateway/standby-reads.ts) on a real server:
// sessions written by a gateway's stores (its image), then every filter, limit and order of
// `sessions.list`, `sessions.resolve` and `chat.history` asked of the image and of the committed
// rows; the answers must be the same. `agent.wait` is answered for a stored run end only.
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { answerWith } from "../../src/gateway/dispatch-request.js";
import { chatHistory } from "../../src/gateway/methods/chat-methods.js";
import type { SessionReadCore } from "../../src/gateway/methods/read-core.js";
import { sessionsList, sessionsResolve } from "../../src/gateway/methods/session-methods.js";
import { createCoreKeys } from "../../src/gateway/core-keys.js";
import { createStandbyReads } from "../../src/gateway/standby-reads.js";
import { createMemoryLogger } from "../../src/logger.js";
import { type OpenedAgentSessions, openAgentSessions } from "../../src/sessions/agent-sessions.js";
import { postgresTranscriptsOpener } from "../../src/sessions/transcripts/postgres-transcripts.js";
import { openPostgresDatabase } from "../../src/state/postgres/database.js";
import { openPostgresState } from "../../src/state/postgres/postgres-state.js";
import { subagentTableSpec } from "../../src/tools/subagent-lifecycle.js";
import type { SubagentRecord } from "../../src/tools/subagent-registry.js";
import { freshSchema, usePostgres } from "../support/postgres.js";

const db = usePostgres();
const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

const MINUTE = 60_000;
const { config } = parseConfig({ agents: { list: [{ id: "main" }, { id: "ops" }] } });
const CHILD = "agent:main:subagent:1b2c3d4e-0000-4000-8000-000000000001";

/** Two agents' stores on a fresh schema (the owner's image of them), and a standby reading that schema. */
async function openOwner() {
  const logger = createMemoryLogger();
  const database = await openPostgresDatabase({ url: db.url, schema: freshSchema(), logger, probeEveryMs: 0 });
  closing.push(() => database.close());
  const state = openPostgresState(database, { logger });
  closing.push(() => state.close());
  const opened = new Map<string, OpenedAgentSessions>();
  for (const agentId of ["main", "ops"]) {
    const sessions = await openAgentSessions({
      agentId,
      storePath: `/nonexistent/agents/${agentId}/sessions/sessions.json`,
      session: config.session,
      logger,
      state,
      openTranscripts: postgresTranscriptsOpener(database),
    });
    closing.push(() => sessions.transcripts.close());
    opened.set(agentId, sessions);
  }
  const subagents = await state.table<SubagentRecord>(subagentTableSpec("subagents.json"));
  const keys = createCoreKeys(config);
  const image: SessionReadCore = {
    agentIds: keys.agentIds,
    parseKey: keys.parseKey,
    clientChannel: "webchat",
    sessions: { forAgent: async (agentId) => opened.get(agentId)! },
    subagents: { byChild: (childKey) => [...subagents.values()].find((r) => r.childSessionKey === childKey) },
  };
  const standby = createStandbyReads({ config, logger, database: () => database });
  closing.push(() => standby.close());
  return { database, state, opened, subagents, image, standby, logger };
}

/** Sessions of two agents written through their stores on a fresh schema: the owner's image, and its database. */
async function ownerWithSessions() {
  const { state, opened, subagents, image, standby, logger } = await openOwner();
  const now = Date.now();
  const write = (agentId: string, key: string, minutesAgo: number, fields: Record<string, unknown> = {}) =>
    opened.get(agentId)!.store.patch(key, () => ({
      sessionId: `s-${key.replaceAll(":", "-")}`,
      updatedAt: now - minutesAgo * MINUTE,
      ...fields,
    }));
  await write("main", "agent:main:main", 1);
  await write("main", "agent:main:telegram:dm:42", 30, { displayName: "Ada Lovelace", label: "ada" });
  await write("main", "agent:main:telegram:group:-100", 90, { subject: "Team room", spawnedBy: "agent:main:main" });
  await write("main", CHILD, 5, { spawnedBy: "agent:main:main" });
  await write("main", "agent:main:webchat:dm:web-1", 10, { label: "twin" });
  await write("ops", "agent:ops:main", 3);
  await write("ops", "agent:ops:cron:nightly", 240, { label: "twin" });
  await write("ops", "global", 2);
  await subagents.set("run-child", {
    runId: "run-child",
    childSessionKey: CHILD,
    childAgentId: "main",
    requesterKey: "agent:main:main",
    origin: { channel: "telegram", to: "42" },
    task: "count the sheep in the field",
    cleanup: "keep",
    state: "running",
    createdAt: now,
  });
  const transcripts = opened.get("main")!.transcripts;
  const entry = opened.get("main")!.store.get("agent:main:telegram:dm:42")!;
  for (let i = 0; i < 7; i++)
    await transcripts.append(
      entry.sessionId,
      { role: i % 2 ? "assistant" : "user", content: `message ${i}`, timestamp: now + i },
      { sessionKey: "agent:main:telegram:dm:42" },
    );
  await state.flush();
  return { image, standby, logger };
}

/** The key of session `i` of `agentId`: dms, groups, sub-agents, cron jobs and web chats in turn. */
function keyOf(agentId: string, i: number): string {
  const id = String(i).padStart(12, "0");
  const rests = [`telegram:dm:${i}`, `telegram:group:-${i}`, `subagent:1b2c3d4e-0000-4000-8000-${id}`, `cron:job-${i}`];
  return `agent:${agentId}:${[...rests, `webchat:dm:web-${i}`][i % 5]}`;
}

/**
 * `count` sessions over two agents, written through the stores: few distinct times (so pages end
 * inside a run of equal times), labels shared by several, spawners; then a row the schema refuses,
 * stored behind the image's back (the image never sees it; the standby must skip it).
 */
async function ownerWithManySessions(count: number) {
  const owner = await openOwner();
  const now = Date.now();
  for (let i = 0; i < count; i++) {
    const agentId = i % 3 ? "main" : "ops";
    const key = keyOf(agentId, i);
    owner.opened.get(agentId)!.store.patchNow(key, () => ({
      sessionId: `s-${i}`,
      updatedAt: now - (i % 400) * 7_000,
      displayName: `Person ${i}`,
      ...(i % 11 === 0 && { label: `team-${i % 4}` }),
      ...(key.includes(":subagent:") && { spawnedBy: i % 2 ? "agent:main:main" : "agent:ops:main" }),
    }));
  }
  owner.opened.get("ops")!.store.patchNow("global", () => ({ sessionId: "s-global", updatedAt: now }));
  await owner.state.flush();
  await owner.database.transaction((client) =>
    client.query("INSERT INTO state_rows (tbl, key, value) VALUES ('sessions:main', $1, $2)", [
      "agent:main:telegram:dm:invalid",
      JSON.stringify({ updatedAt: now, label: "team-1" }),
    ]),
  );
  return owner;
}

type Read = [typeof sessionsList | typeof sessionsResolve | typeof chatHistory, Record<string, unknown>];

/** Asks each read of the owner's image and of the standby: the same answer, read by read. */
async function expectSameAnswers(owner: Awaited<ReturnType<typeof ownerWithSessions>>, reads: Read[]) {
  const context = { caller: { client: "test" }, logger: owner.logger };
  for (const [i, [method, params]] of reads.entries()) {
    const request = { id: `r${i}`, params };
    const fromImage = await answerWith(method, owner.image, request, context);
    const fromStandby = await owner.standby.answer({ type: "req", ...request, method: method.name }, "test");
    expect(fromStandby, `${method.name} ${JSON.stringify(params)}`).toEqual(fromImage);
  }
}

describe("a standby's reads from PostgreSQL", () => {
  it("answers sessions.list, sessions.resolve and chat.history as the owner's image does, for every filter, limit and page", async () => {
    const { image, standby, logger } = await ownerWithSessions();
    const reads: Read[] = [
      [sessionsList, {}],
      [sessionsList, { limit: 3 }],
      [sessionsList, { activeMinutes: 20 }],
      [sessionsList, { kinds: ["dm", "group"] }],
      [sessionsList, { agentId: "ops" }],
      [sessionsList, { agentId: "ops", includeGlobal: true }],
      [sessionsList, { spawnedBy: "main" }],
      [sessionsList, { label: "twin" }],
      [sessionsList, { search: "LOVELACE" }],
      [sessionsList, { search: "sheep" }],
      [sessionsResolve, { key: "agent:main:telegram:dm:42" }],
      [sessionsResolve, { key: "agent:main:telegram:dm:43" }],
      [sessionsResolve, { label: "ada" }],
      [sessionsResolve, { label: "twin" }],
      [sessionsResolve, { sessionId: "s-agent-ops-main" }],
      [chatHistory, { sessionKey: "agent:main:telegram:dm:42" }],
      [chatHistory, { sessionKey: "agent:main:telegram:dm:42", limit: 3 }],
      [chatHistory, { sessionKey: "agent:main:telegram:dm:43" }],
      [chatHistory, { sessionKey: "agent:main:telegram:dm:42", limit: "many" }],
      [chatHistory, { sessionKey: "agent:ops:main" }],
      [chatHistory, {}],
      [chatHistory, { sessionKey: "agent:main:telegram:dm:42", cursor: "not-a-cursor" }],
    ];
    await expectSameAnswers({ image, standby, logger }, reads);
    const context = { caller: { client: "test" }, logger };
    // The pages go on as the image's: the cursor of the first page, asked of the standby.
    const first = await answerWith(
      chatHistory,
      image,
      { id: "p", params: { sessionKey: "agent:main:telegram:dm:42", limit: 3 } },
      context,
    );
    const cursor = (first as { payload: { cursor: string } }).payload.cursor;
    const params = { sessionKey: "agent:main:telegram:dm:42", limit: 3, cursor };
    expect(await standby.answer({ type: "req", id: "q", method: "chat.history", params }, "test")).toEqual(
      await answerWith(chatHistory, image, { id: "q", params }, context),
    );
  });

  it("answers sessions.list and sessions.resolve as the image does at 3,000 sessions, for every filter and limit, across pages and equal times", async () => {
    const { image, standby, logger } = await ownerWithManySessions(3_000);
    const filters: Array<Record<string, unknown>> = [
      {},
      { kinds: ["group"] },
      { kinds: ["subagent", "cron"], agentId: "main" },
      { activeMinutes: 10 },
      { spawnedBy: "main" },
      { label: "team-1" },
      { search: "person 1" },
      { search: "PERSON 2997" },
      { includeGlobal: true, activeMinutes: 1 },
      { kinds: ["dm"], search: "web", activeMinutes: 30 },
    ];
    const reads: Read[] = [
      ...filters.flatMap((filter) =>
        [undefined, 1, 50, 199, 200, 201, 450, 1000].map((limit): Read => [sessionsList, { ...filter, limit }]),
      ),
      [sessionsResolve, { label: "team-2" }],
      [sessionsResolve, { label: "team-1" }],
      [sessionsResolve, { sessionId: "s-2999" }],
      [sessionsResolve, { sessionId: "s-nobody" }],
      [sessionsResolve, { key: keyOf("main", 2999) }],
      [sessionsResolve, { key: "agent:main:telegram:dm:invalid" }],
    ];
    await expectSameAnswers({ image, standby, logger }, reads);
  });

  it("lists newest first with a sub-agent's task as its title, and keeps global sessions out unless asked", async () => {
    const { standby } = await ownerWithSessions();
    const answer = await standby.answer({ type: "req", id: "1", method: "sessions.list", params: {} }, "test");
    const rows = (answer as { payload: { sessions: Array<{ key: string; title: string; updatedAt: number }> } }).payload
      .sessions;
    expect(rows.map((r) => r.key)).toEqual([
      "agent:main:main",
      "agent:ops:main",
      CHILD,
      "agent:main:webchat:dm:web-1",
      "agent:main:telegram:dm:42",
      "agent:main:telegram:group:-100",
      "agent:ops:cron:nightly",
    ]);
    expect(rows.find((r) => r.key === CHILD)?.title).toBe("Sub-agent: count the sheep in the field");
    expect(rows.find((r) => r.key === "agent:main:telegram:group:-100")?.title).toBe("Team room");
  });

  it("answers agent.wait for a stored run end only: a run it cannot read is left to the owner (undefined)", async () => {
    const { standby } = await ownerWithSessions();
    expect(standby.serves("agent.wait")).toBe(true);
    expect(standby.serves("chat.send")).toBe(false);
    const wait = { type: "req", id: "w", method: "agent.wait", params: { runId: "nobody", timeoutMs: 10 } };
    expect(await standby.answer(wait, "test")).toBeUndefined();
    expect(
      await standby.answer({ type: "req", id: "x", method: "sessions.list", params: { bogus: 1 } }, "test"),
    ).toEqual({
      type: "res",
      id: "x",
      ok: false,
      error: { code: "INVALID_REQUEST", message: expect.stringContaining("bogus") },
    });
  });
});
