import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { InboundMessageSchema } from "../../src/routing/index.js";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { type TestGateway, nextEvent, useTestGateways } from "../support/test-gateway.js";

const start = useTestGateways();

const telegram = (chat: Record<string, unknown>, text: string, messageId: string) =>
  InboundMessageSchema.parse({ channel: "telegram", chat, sender: { id: "42", name: "Ada" }, messageId, text });

async function transcript(home: string, agentId: string, sessionId: string) {
  const text = await readFile(path.join(home, "agents", agentId, "sessions", `${sessionId}.jsonl`), "utf8");
  return text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .filter((l) => l.type === "message")
    .map((l) => l.message);
}

describe("sessions_send through the gateway", () => {
  it("waits for B's own reply, ping-pongs two turns until REPLY_SKIP, and announces into B's chat", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const modelA = createScriptedModel([
      {
        toolCalls: [
          {
            name: "sessions_send",
            input: { sessionKey: "agent:b:telegram:dm:42", message: "what is 2+2?", timeoutSeconds: 30 },
          },
        ],
      },
      { text: "B says 4" },
      { text: "thanks, and 3+3?" },
      { text: "REPLY_SKIP" },
    ]);
    const modelB = createScriptedModel([
      { text: "hi Ada" },
      { text: "4" },
      { text: "6" },
      { text: "Agent A asked me some sums: 2+2=4, 3+3=6." },
    ]);
    const gw = await start({
      adapters: [fake],
      models: { "test/a": modelA, "test/b": modelB },
      config: {
        agents: {
          list: [
            { id: "a", default: true, model: "test/a" },
            { id: "b", model: "test/b" },
          ],
        },
        bindings: [{ agentId: "b", match: { channel: "telegram" } }],
        tools: { agentToAgent: { enabled: true } },
        channels: { telegram: { dmPolicy: "open" } },
        session: { dmScope: "per-channel-peer" },
      },
    });
    const first = await gw.gateway.core.pipeline.handleInbound(telegram({ type: "direct", id: "42" }, "hello b", "m1"));
    if (first.status === "queued") await first.done;
    const client = await gw.client();
    const { runId } = await client.call<{ runId: string }>("chat.send", {
      sessionKey: "agent:a:main",
      message: "ask b about 2+2",
    });
    expect(await client.call("agent.wait", { runId, timeoutMs: 10_000 })).toMatchObject({
      status: "ok",
      text: "B says 4",
    });
    await expect
      .poll(() => fake.texts(), { timeout: 10_000 })
      .toEqual(["hi Ada", "Agent A asked me some sums: 2+2=4, 3+3=6."]);
    expect(modelA.prompts).toHaveLength(4);
    expect(modelB.prompts).toHaveLength(4);
    const toolResult = JSON.stringify(modelA.prompts[1]!.at(-1));
    expect(toolResult).toContain('"status":"ok"');
    expect(toolResult).toContain('"reply":"4"');
    const entry = (await gw.gateway.core.sessions.forAgent("b")).store.get("agent:b:telegram:dm:42")!;
    const messages = await transcript(gw.home, "b", entry.sessionId);
    expect(messages.find((m) => m.content === "what is 2+2?")).toMatchObject({
      role: "user",
      provenance: { kind: "session", sessionKey: "agent:a:main", hop: 1 },
    });
  });

  it("stops a chain through three agents at the hop budget", async () => {
    const gw = await start({
      config: {
        agents: { list: [{ id: "a", default: true }, { id: "b" }, { id: "c" }] },
        tools: { agentToAgent: { enabled: true } },
        session: { agentToAgent: { maxHops: 2 } },
      },
    });
    const client = await gw.client();
    for (const key of ["agent:b:main", "agent:c:main"])
      await client.call("sessions.patch", { key, label: key.split(":")[1] });
    const { runId } = await client.call<{ runId: string }>("chat.send", {
      sessionKey: "agent:a:main",
      message: "send to agent:b:main: send to agent:c:main: send to agent:a:main: hello",
    });
    const run = await client.call<{ status: string; text: string }>("agent.wait", { runId, timeoutMs: 20_000 });
    expect(run.status).toBe("ok");
    const c = (await gw.gateway.core.sessions.forAgent("c")).store.get("agent:c:main")!;
    const cMessages = JSON.stringify(await transcript(gw.home, "c", c.sessionId));
    expect(cMessages).toContain("hop budget exhausted");
    const a = (await gw.gateway.core.sessions.forAgent("a")).store.get("agent:a:main")!;
    expect(JSON.stringify(await transcript(gw.home, "a", a.sessionId))).not.toContain('"content":"hello"');
  });
});

describe("sessions_send from a chat turn when every chat-turn slot is taken", () => {
  it("gives the caller's slot back while it waits, so the target's turn, queued behind a chat turn waiting for a slot, still answers", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const dmFrom = (id: string, text: string, messageId: string) =>
      InboundMessageSchema.parse({
        channel: "telegram",
        chat: { type: "direct", id },
        sender: { id },
        messageId,
        text,
      });
    let letAAsk!: () => void;
    const aMayAsk = new Promise<void>((resolve) => (letAAsk = resolve));
    const modelA = createScriptedModel([
      {
        until: aMayAsk,
        toolCalls: [
          { name: "sessions_send", input: { sessionKey: "agent:b:telegram:dm:2", message: "2+2?", timeoutSeconds: 8 } },
        ],
      },
      { text: "B says 4" },
    ]);
    const modelB = createScriptedModel([
      { text: "hello 2" },
      { text: "hello again" },
      { text: "4" },
      { text: "ANNOUNCE_SKIP" },
    ]);
    const gw = await start({
      adapters: [fake],
      models: { "test/a": modelA, "test/b": modelB },
      // One slot: A's chat turn holds it; B's chat message then waits for it at the head of B's lane.
      chatTurnsAtOnce: 1,
      config: {
        agents: {
          list: [
            { id: "a", default: true, model: "test/a" },
            { id: "b", model: "test/b" },
          ],
        },
        bindings: [
          { agentId: "a", match: { channel: "telegram", peer: { kind: "dm", id: "1" } } },
          { agentId: "b", match: { channel: "telegram", peer: { kind: "dm", id: "2" } } },
        ],
        tools: { agentToAgent: { enabled: true } },
        // Sender 1 owns the bot, so its turn's session tools reach other agents' sessions.
        channels: { telegram: { dmPolicy: "open", owners: ["1"] } },
        session: { dmScope: "per-channel-peer", agentToAgent: { maxPingPongTurns: 0 } },
      },
    });
    const { pipeline } = gw.gateway.core;
    // B's session exists (a sessions_send target must).
    const first = await pipeline.handleInbound(dmFrom("2", "hi", "b1"));
    if (first.status === "queued") await first.done;
    const a = await pipeline.handleInbound(dmFrom("1", "ask b", "a1"));
    await expect.poll(() => modelA.calls.length).toBe(1);
    const b = await pipeline.handleInbound(dmFrom("2", "again", "b2"));
    expect(modelB.calls).toHaveLength(1);
    const started = Date.now();
    letAAsk();
    if (a.status !== "queued" || b.status !== "queued") throw new Error("both messages should start turns");
    expect(await a.done).toMatchObject({ status: "ok", text: "B says 4" });
    expect(await b.done).toMatchObject({ status: "ok", text: "hello again" });
    // The tool got B's answer, not a timeout after 8 s.
    const toolResult = JSON.stringify(modelA.prompts[1]!.at(-1));
    expect(toolResult).toContain('"status":"ok"');
    expect(toolResult).toContain('"reply":"4"');
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(fake.texts()).toEqual(expect.arrayContaining(["hello 2", "hello again", "B says 4"]));
  });
});

describe("sessions_spawn through the gateway", () => {
  const spawnConfig = (extra: Record<string, unknown> = {}) => ({
    agents: {
      list: [
        { id: "main", default: true, model: "test/main", subagents: { allowAgents: ["worker"] } },
        { id: "worker", model: "test/worker" },
      ],
    },
    channels: { telegram: { groupPolicy: "open", groups: { "*": { requireMention: false } } } },
    ...extra,
  });

  async function spawnFromTopic(
    worker: ReturnType<typeof createScriptedModel>,
    spawnArgs: Record<string, unknown>,
    whileRunning?: (gw: TestGateway) => Promise<void>,
  ) {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const main = createScriptedModel([
      {
        toolCalls: [
          { name: "sessions_spawn", input: { task: "research X", agentId: "worker", label: "research", ...spawnArgs } },
        ],
      },
      { text: "on it" },
    ]);
    const gw = await start({
      adapters: [fake],
      models: { "test/main": main, "test/worker": worker },
      config: spawnConfig(),
    });
    const result = await gw.gateway.core.pipeline.handleInbound(
      telegram({ type: "group", id: "-100", isForum: true, threadId: "7", title: "Team" }, "please research X", "m1"),
    );
    if (result.status === "queued") await result.done;
    await whileRunning?.(gw);
    return { gw, fake };
  }

  it("announces Status/Result/Notes into the forum topic it came from, even after the session's route moved", async () => {
    const worker = createScriptedModel([
      { text: "X is a letter.", delayMs: 300 },
      { text: "- **Result:** X is the 24th letter.\n- **Notes:** found quickly" },
    ]);
    const { gw, fake } = await spawnFromTopic(worker, {}, async (g) => {
      const { store } = await g.gateway.core.sessions.forAgent("main");
      await store.patch("agent:main:telegram:group:-100:topic:7", () => ({
        deliveryContext: { channel: "telegram", to: "-999" },
        lastTo: "-999",
        lastThreadId: undefined,
      }));
    });
    await expect
      .poll(() => gw.gateway.core.subagents.list("agent:main:telegram:group:-100:topic:7")[0]?.state, {
        timeout: 10_000,
      })
      .toBe("announced");
    // "announced" once handed to the requester (stored in its inbox); the requester's turn sends it.
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(2);
    const announce = fake.sent[1]!;
    expect(announce.target).toMatchObject({ channel: "telegram", to: "-100", threadId: "7" });
    expect(announce.message.text).toMatch(
      /^Sub-agent "research"\n\nStatus: success\n\nResult:\nX is the 24th letter\.\n\nNotes:\nfound quickly\n\nStats: runtime \d+s • tokens 15 \(in 10 \/ out 5\) • sessionKey agent:worker:subagent:/,
    );
    expect(gw.gateway.core.subagents.list("agent:main:telegram:group:-100:topic:7")[0]).toMatchObject({
      outcome: "success",
    });
    // A server path never leaves for a chat platform: the transcript is named by its file.
    expect(announce.message.text).not.toContain(gw.home);
    expect(announce.message.text).toMatch(/ • transcript [0-9a-f-]+\.jsonl$/);
  });

  it("shows the full transcript path to the web chat, and no stats with announceStats off", async () => {
    const gw = await start({});
    const client = await gw.client();
    const delivered = nextEvent<{ text: string }>(client, "chat.delivery", (p) => p.text.includes("Status:"));
    await client.call("chat.send", { message: "spawn: count to three" });
    expect((await delivered).text).toContain(` • transcript ${gw.home}`);
    const quiet = await start({ config: { agents: { defaults: { subagents: { announceStats: "off" } } } } });
    const quietClient = await quiet.client();
    const silent = nextEvent<{ text: string }>(quietClient, "chat.delivery", (p) => p.text.includes("Status:"));
    await quietClient.call("chat.send", { message: "spawn: count to three" });
    expect((await silent).text).not.toContain("Stats:");
  });

  it("posts nothing when the sub-agent answers ANNOUNCE_SKIP", async () => {
    const worker = createScriptedModel([{ text: "nothing found" }, { text: "ANNOUNCE_SKIP" }]);
    const { gw, fake } = await spawnFromTopic(worker, {});
    await expect
      .poll(() => gw.gateway.core.subagents.list("agent:main:telegram:group:-100:topic:7")[0]?.state, {
        timeout: 10_000,
      })
      .toBe("announced");
    expect(fake.texts()).toEqual(["on it"]);
  });

  it("announces a sub-agent that exceeds runTimeoutSeconds as timed out", async () => {
    const worker = createScriptedModel([
      { text: "never", delayMs: 5_000 },
      { text: "Result: ran out of time\nNotes: partial" },
    ]);
    const { fake } = await spawnFromTopic(worker, { runTimeoutSeconds: 1 });
    await expect.poll(() => fake.sent.length, { timeout: 10_000 }).toBe(2);
    expect(fake.sent[1]!.message.text).toContain("Status: timeout\n\nResult:\nran out of time");
  });

  it("deletes the child session after the announce with cleanup delete, keeping its transcript aside", async () => {
    const worker = createScriptedModel([{ text: "done" }, { text: "Result: done" }]);
    const { gw, fake } = await spawnFromTopic(worker, { cleanup: "delete" });
    await expect
      .poll(() => gw.gateway.core.subagents.list("agent:main:telegram:group:-100:topic:7")[0]?.state, {
        timeout: 10_000,
      })
      .toBe("archived");
    // The announce is a stored turn of the requester's session: archived does not wait for its send.
    await gw.gateway.core.idle();
    expect(fake.sent).toHaveLength(2);
    const { store } = await gw.gateway.core.sessions.forAgent("worker");
    expect(store.list({ kinds: ["subagent"] })).toEqual([]);
    const files = await readdir(path.join(gw.home, "agents", "worker", "sessions"));
    expect(files.some((f) => f.includes(".jsonl.deleted."))).toBe(true);
  });
});

describe("sub-agent archive", () => {
  it("archives a kept sub-agent session archiveAfterMinutes after its announce, never while it runs", async () => {
    let now = Date.now();
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const main = createScriptedModel([
      {
        toolCalls: [
          { name: "sessions_spawn", input: { task: "quick", agentId: "quick" } },
          { name: "sessions_spawn", input: { task: "slow", agentId: "slow" } },
        ],
      },
      { text: "two started" },
    ]);
    const quick = createScriptedModel([{ text: "quick done" }, { text: "Result: quick done" }]);
    const slow = createScriptedModel([{ text: "slow done", delayMs: 60_000 }]);
    const gw = await start({
      adapters: [fake],
      now: () => now,
      models: { "test/main": main, "test/quick": quick, "test/slow": slow },
      config: {
        agents: {
          list: [
            { id: "main", default: true, model: "test/main", subagents: { allowAgents: ["*"] } },
            { id: "quick", model: "test/quick" },
            { id: "slow", model: "test/slow" },
          ],
          defaults: { subagents: { archiveAfterMinutes: 5 } },
        },
        channels: { telegram: { dmPolicy: "open" } },
        session: { dmScope: "per-channel-peer" },
      },
    });
    const result = await gw.gateway.core.pipeline.handleInbound(telegram({ type: "direct", id: "42" }, "go", "m1"));
    if (result.status === "queued") await result.done;
    const key = "agent:main:telegram:dm:42";
    const { subagents } = gw.gateway.core;
    await expect
      .poll(
        () =>
          subagents
            .list(key)
            .map((r) => r.state)
            .sort(),
        { timeout: 10_000 },
      )
      .toEqual(["announced", "running"]);
    expect(await subagents.sweep()).toBe(0);
    const announced = subagents.list(key).find((r) => r.state === "announced")!;
    now = announced.archiveAt! + 1;
    expect(await subagents.sweep()).toBe(1);
    expect(
      subagents
        .list(key)
        .map((r) => r.state)
        .sort(),
    ).toEqual(["archived", "running"]);
    expect((await gw.gateway.core.sessions.forAgent("quick")).store.get(announced.childSessionKey)).toBeUndefined();
    expect(await subagents.stop(key)).toBe(1);
  });
});

describe("tools over every surface", () => {
  it("runs the same tool through tools.invoke and POST /tools/invoke, with structured argument errors", async () => {
    const gw = await start({});
    const client = await gw.client();
    const viaWs = await client.call<{ count: number }>("tools.invoke", { tool: "sessions_list", args: {} });
    expect(viaWs).toEqual({ count: 0, sessions: [] });
    const base = gw.gateway.url.replace(/^ws/, "http");
    const post = (body: unknown) =>
      fetch(`${base}/tools/invoke`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const invalid = await post({ tool: "sessions_list", args: { limit: "lots" } });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toEqual({
      ok: false,
      error: {
        code: "INVALID_REQUEST",
        message: "invalid arguments for sessions_list: limit: Invalid input: expected number, received string",
      },
    });
    const ran = await post({ tool: "sessions_history", args: { sessionKey: "agent:main:nope" } });
    expect(ran.status).toBe(200);
    expect(await ran.json()).toMatchObject({
      ok: true,
      result: { status: "error", error: expect.stringContaining("Unknown session") },
    });
  });
});
