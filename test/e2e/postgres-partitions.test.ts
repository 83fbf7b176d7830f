// A gateway on PostgreSQL stores every per-session row under its session's partition (migration
// 0008, docs/scale-out.md "The way there", step 1): a DM in a forum topic that spawns a sub-agent
// and a web client's turn write sessions of two agents, outbox and sub-agent rows and three transcripts; each carries
// `partOf(its session's key)`, and the adapter's channel rows (no session) carry none.
import pg from "pg";
import type { Update } from "grammy/types";
import { afterEach, describe, expect, it } from "vitest";
import { partOf } from "../../src/routing/partition.js";
import { TEST_BOT, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { startPlatformGateway } from "../support/platform-gateway.js";
import { freshSchema, usePostgres } from "../support/postgres.js";
import { RESEARCH_ANNOUNCE, researchSpawn } from "../support/research-spawn.js";

const db = usePostgres();
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const OPS = "agent:main:webchat:dm:ops";
const FORUM = { id: -1002000000001, type: "supergroup", title: "Project Forum", is_forum: true } as const;
const ADA = { id: 111, is_bot: false, first_name: "Ada", username: "ada" } as const;
const topicMessage = (text: string): Omit<Update, "update_id"> =>
  ({
    message: {
      message_id: 100,
      date: 1767225600,
      chat: FORUM,
      from: ADA,
      text,
      message_thread_id: 7,
      is_topic_message: true,
    },
  }) as unknown as Omit<Update, "update_id">;

interface StoredRow {
  tbl: string;
  key: string;
  value: Record<string, unknown>;
  part: number | null;
}

async function read(schema: string) {
  const client = new pg.Client({ connectionString: db.url, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    const rows = (await client.query<StoredRow>("SELECT tbl, key, value, part FROM state_rows ORDER BY tbl, ord")).rows;
    const transcripts = (
      await client.query<{ agent: string; id: string; part: number | null }>(
        "SELECT agent, header->>'id' AS id, part FROM transcripts ORDER BY tid",
      )
    ).rows;
    return { rows, transcripts };
  } finally {
    await client.end();
  }
}

describe("partitions of a gateway's rows on PostgreSQL", () => {
  it("stores each session's rows, its outbox and sub-agent rows and its transcript under partOf(its key), its handled messages' dedupe rows too; channel rows under none", async () => {
    const fake = await startFakeTelegramServer();
    cleanups.push(fake.close);
    const schema = freshSchema();
    const { models, agents } = researchSpawn();
    // main's third answer is for the web client's turn below.
    models["test/main"] = createScriptedModel([
      { toolCalls: [{ name: "sessions_spawn", input: { task: "research X", agentId: "worker", label: "research" } }] },
      { text: "on it" },
      { text: "hello ops" },
    ]);
    const telegram = { botToken: TEST_BOT.token, apiRoot: fake.apiRoot, allowFrom: ["111"], owners: ["111"] };
    const gw = await startPlatformGateway({
      models,
      config: {
        agents,
        state: { backend: "postgres", postgres: { url: db.url, schema, poolSize: 4 } },
      },
      channel: {
        id: "telegram",
        settings: { ...telegram, groupAllowFrom: ["@ada"], groups: { [String(FORUM.id)]: { requireMention: false } } },
      },
    });
    cleanups.push(gw.close);
    fake.push(topicMessage("please research X"));
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(2);
    expect(fake.sent[1]!.text).toMatch(RESEARCH_ANNOUNCE);
    // A turn a client starts in a session it names: its inbox row knows the session.
    const client = await gw.client();
    const { runId } = await client.call<{ runId: string }>("chat.send", { sessionKey: OPS, message: "hi" });
    expect(await client.call("agent.wait", { runId, timeoutMs: 10_000 })).toMatchObject({ text: "hello ops" });
    await gw.close();

    const { rows, transcripts } = await read(schema);
    const of = (tbl: string) => rows.filter((row) => row.tbl === tbl);
    const sessions = rows.filter((row) => row.tbl.startsWith("sessions:"));
    expect(sessions.map((row) => row.key).sort()).toEqual([
      "agent:main:telegram:group:-1002000000001:topic:7",
      OPS,
      expect.stringMatching(/^agent:worker:subagent:/),
    ]);
    for (const row of sessions) expect(row.part, row.key).toBe(partOf(row.key));
    // The outbox: the reply and the announce, both of the topic's session.
    expect(of("outbox").length).toBeGreaterThanOrEqual(2);
    for (const row of of("outbox")) expect(row.part, row.key).toBe(partOf(row.value.sessionKey as string));
    // The sub-agent run lives in the child's session.
    expect(of("subagents")).toHaveLength(1);
    for (const row of of("subagents")) expect(row.part).toBe(partOf(row.value.childSessionKey as string));
    // Handled messages, the spawn and its announce (stored turns) are kept as dedupe keys in their
    // session's partition, so that partition's owner writes and prunes them
    // (test/state/postgres/store-parts.test.ts: pending ones; owner-fences.test.ts).
    const inbox = of("inbox");
    expect(inbox).toHaveLength(4);
    expect(inbox.filter((row) => /^(spawn|announce):/.test(row.key))).toHaveLength(2);
    for (const row of inbox) {
      const session = (row.value.sessionKey ?? row.value.session) as string;
      expect(row.part, row.key).toBe(partOf(session));
    }
    // Channel rows (the Telegram offset) belong to an account, not a session.
    expect(of("channels").length).toBeGreaterThan(0);
    for (const row of of("channels")) expect(row.part).toBeNull();
    // Each transcript carries the part of the session whose id its header names.
    const sessionOfId = new Map(sessions.map((row) => [row.value.sessionId as string, row.key]));
    expect(transcripts).toHaveLength(3);
    for (const transcript of transcripts) expect(transcript.part).toBe(partOf(sessionOfId.get(transcript.id)!));
  });
});
