import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { STRINGS } from "../../src/commands/command-strings.js";
import { InboundMessageSchema } from "../../src/routing/index.js";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { type TestGateway, useTestGateways } from "../support/test-gateway.js";
import { telegramDmFrom } from "../support/telegram-dm.js";

const start = useTestGateways();

// 42 owns the bot, 7 may run commands, 8 may only talk.
const TELEGRAM = { owners: ["42"], commandAllowFrom: ["7"], allowFrom: ["8"] };
const OWNER_DM = "agent:main:telegram:dm:42";
// Three people may DM the bot: each gets a DM session of their own.
const PER_SENDER = { dmScope: "per-channel-peer" };

let seq = 0;
const dm = (sender: string, text: string) => telegramDmFrom(sender, text, { messageId: `m${++seq}` });
const inGroup = (sender: string, text: string) =>
  InboundMessageSchema.parse({
    channel: "telegram",
    chat: { type: "group", id: "-100" },
    sender: { id: sender },
    messageId: `m${++seq}`,
    text,
  });

/** Sends a message through the pipeline and waits for its turn, if it started one. */
async function send(gw: TestGateway, message: ReturnType<typeof dm>) {
  const result = await gw.gateway.core.pipeline.handleInbound(message);
  if (result.status === "queued") await result.done;
  return result;
}

async function transcriptRoles(home: string): Promise<string[]> {
  const dir = path.join(home, "agents", "main", "sessions");
  const files = (await readdir(dir)).filter((f) => f.endsWith(".jsonl"));
  const lines = (await Promise.all(files.map((f) => readFile(path.join(dir, f), "utf8")))).join("").trim().split("\n");
  return lines
    .map((l) => JSON.parse(l))
    .filter((l) => l.type === "message")
    .map((l) => `${l.message.role}${l.message.command ? " (command)" : ""}`);
}

describe("commands through the gateway", () => {
  it("stops delivering the agent's replies after /send off, records them, and delivers again after /send on", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const gw = await start({ adapters: [fake], config: { channels: { telegram: TELEGRAM }, session: PER_SENDER } });
    await send(gw, dm("42", "/send off"));
    expect(await send(gw, dm("42", "are you there?"))).toMatchObject({ status: "queued" });
    expect(await send(gw, dm("42", "/status"))).toMatchObject({
      status: "command",
      reply: expect.stringContaining("Send policy: deny (this session's /send override)"),
    });
    expect(fake.texts()).toEqual([
      `${STRINGS.sendSet("off")} Replies here are not delivered (this session's /send override).`,
      expect.stringContaining("Send policy: deny"),
    ]);
    expect(await transcriptRoles(gw.home)).toEqual([
      "user (command)",
      "assistant (command)",
      "user",
      "assistant",
      "user (command)",
      "assistant (command)",
    ]);
    expect(gw.logger.records.some((r) => r.message === "delivery denied by sendPolicy")).toBe(true);
    await send(gw, dm("42", "/send on"));
    await send(gw, dm("42", "and now?"));
    expect(fake.texts().slice(2)).toEqual([
      `${STRINGS.sendSet("on")} Replies here are delivered (this session's /send override).`,
      "Echo: and now?",
    ]);
  });

  it("aborts a long run, the message queued behind it and both sub-agents it spawned on /stop, and counts them", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const parent = createScriptedModel([
      {
        toolCalls: [
          { name: "sessions_spawn", input: { task: "dig A", label: "a", model: "child" } },
          { name: "sessions_spawn", input: { task: "dig B", label: "b", model: "child" } },
        ],
      },
      { text: "still working", delayMs: 20_000 },
    ]);
    const child = createScriptedModel([
      { text: "A", delayMs: 20_000 },
      { text: "B", delayMs: 20_000 },
    ]);
    const gw = await start({
      adapters: [fake],
      models: { "test/parent": parent, "test/child": child },
      config: {
        agents: { defaults: { model: "test/parent" } },
        models: { aliases: { child: "test/child" } },
        channels: { telegram: TELEGRAM },
        session: PER_SENDER,
      },
    });
    const { core } = gw.gateway;
    const turn = await core.pipeline.handleInbound(dm("42", "research A and B"));
    if (turn.status !== "queued") throw new Error(`not queued: ${turn.status}`);
    await expect
      .poll(() => [parent.calls.length, child.calls.length, core.subagents.list(OWNER_DM).length], { timeout: 5_000 })
      .toEqual([2, 2, 2]);
    const waiting = await core.pipeline.handleInbound(dm("42", "and one more thing"));
    if (waiting.status !== "queued") throw new Error(`not queued: ${waiting.status}`);
    const reply = `${STRINGS.aborted} ${STRINGS.droppedQueued(1)} ${STRINGS.stoppedSubagents(2)}`;
    expect(reply).toContain("Dropped 1 queued message.");
    expect(await core.pipeline.handleInbound(dm("42", "/stop"))).toMatchObject({ status: "command", reply });
    expect(await turn.done).toMatchObject({ status: "aborted" });
    expect(await waiting.done).toMatchObject({ status: "aborted" });
    const children = core.subagents.list(OWNER_DM).map((s) => s.runId);
    await expect.poll(() => children.map((runId) => core.runs.get(runId)?.status)).toEqual(["aborted", "aborted"]);
    expect((await core.sessions.forAgent("main")).store.get(OWNER_DM)?.abortedLastRun).toBe(true);
    expect(fake.texts()).toEqual([reply]);
  });

  it("changes nothing for a non-owner's /send off: a refusal in a DM, silence in a group", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const gw = await start({ adapters: [fake], config: { channels: { telegram: TELEGRAM }, session: PER_SENDER } });
    await send(gw, dm("8", "hi"));
    expect(await send(gw, dm("7", "/send off"))).toMatchObject({
      status: "command",
      reply: STRINGS.refusedOwner("/send"),
    });
    expect(await send(gw, dm("8", "/send off"))).toMatchObject({ status: "command", reply: STRINGS.refusedCommands });
    expect(await send(gw, inGroup("7", "/send off"))).toEqual({
      status: "command",
      sessionKey: "agent:main:telegram:group:-100",
    });
    const { store } = await gw.gateway.core.sessions.forAgent("main");
    expect(store.list().filter((row) => row.entry.sendPolicy !== undefined)).toEqual([]);
    expect(fake.sent.map((s) => [s.target.to, s.message.text])).toEqual([
      ["8", "Echo: hi"],
      ["7", STRINGS.refusedOwner("/send")],
      ["8", STRINGS.refusedCommands],
    ]);
  });

  it("keeps the tiers apart (issue 11): 7 runs commands but is not a talker, 8 talks but runs no commands, 42 does both", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const gw = await start({
      adapters: [fake],
      config: { channels: { telegram: { ...TELEGRAM, groupAllowFrom: ["8"] } }, session: PER_SENDER },
    });
    expect(await send(gw, dm("7", "hi"))).toMatchObject({ status: "ignored", reason: "commands-only" });
    expect(await send(gw, inGroup("7", "@bot hi"))).toMatchObject({ status: "ignored", reason: "commands-only" });
    expect(await send(gw, dm("7", "/status"))).toMatchObject({
      status: "command",
      reply: expect.stringContaining("agent:main:telegram:dm:7"),
    });
    expect(await send(gw, dm("7", "/new hello"))).toMatchObject({
      status: "command",
      reply: STRINGS.refusedNoTalk("/new"),
    });
    expect(await send(gw, dm("8", "hi"))).toMatchObject({ status: "queued" });
    expect(await send(gw, dm("8", "/status"))).toMatchObject({ status: "command", reply: STRINGS.refusedCommands });
    expect(await send(gw, dm("42", "hi"))).toMatchObject({ status: "queued" });
    expect(await send(gw, dm("42", "/status"))).toMatchObject({
      status: "command",
      reply: expect.stringContaining(OWNER_DM),
    });
    const { store } = await gw.gateway.core.sessions.forAgent("main");
    // A command user's messages never start a session of their own, nor reach the model or its tools.
    expect(store.get("agent:main:telegram:dm:7")?.inputTokens).toBeUndefined();
    expect(fake.texts().filter((t) => t.startsWith("Echo:"))).toEqual(["Echo: hi", "Echo: hi"]);
  });

  it("lets the person named in allowFrom run /status and /send off when no owners list is set", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const gw = await start({ adapters: [fake], config: { channels: { telegram: { allowFrom: ["42"] } } } });
    expect(await send(gw, dm("42", "/status"))).toMatchObject({
      status: "command",
      reply: expect.stringContaining("agent:main:main"),
    });
    expect(await send(gw, dm("42", "/send off"))).toMatchObject({
      status: "command",
      reply: expect.stringContaining(STRINGS.sendSet("off")),
    });
    const { store } = await gw.gateway.core.sessions.forAgent("main");
    expect(store.get("agent:main:main")?.sendPolicy).toBe("deny");
    expect(fake.texts().some((t) => t === STRINGS.refusedCommands)).toBe(false);
  });

  it("lists the valid models for /new with an unknown one and keeps the session", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const gw = await start({
      adapters: [fake],
      config: {
        models: { aliases: { mini: "openai/gpt-4o-mini" } },
        channels: { telegram: TELEGRAM },
        session: PER_SENDER,
      },
    });
    await send(gw, dm("42", "hello"));
    const { store } = await gw.gateway.core.sessions.forAgent("main");
    const before = store.get(OWNER_DM)!.sessionId;
    await send(gw, dm("42", "/new gpt-x"));
    expect(fake.texts().at(-1)).toBe(STRINGS.unknownModel("gpt-x", "offline/echo, openai/gpt-4o-mini (mini)"));
    expect(store.get(OWNER_DM)!.sessionId).toBe(before);
  });
});

describe("commands in a group that needs a mention", () => {
  it("takes a command the adapter marked as mentioning the bot, and leaves /status@otherbot alone", async () => {
    const fake = createFakeChannelAdapter({ id: "telegram" });
    const gw = await start({
      adapters: [fake],
      config: { channels: { telegram: { ...TELEGRAM, groupPolicy: "open" } }, session: PER_SENDER },
    });
    const mentioned = (text: string) => ({ ...inGroup("42", text), wasMentioned: true });
    expect(await send(gw, mentioned("/status"))).toMatchObject({
      status: "command",
      reply: expect.stringContaining("Send policy"),
    });
    expect(await send(gw, inGroup("42", "/status@otherbot"))).toMatchObject({
      status: "ignored",
      reason: "not-mentioned",
    });
    const first = await send(gw, mentioned("/new"));
    expect(first).toMatchObject({ status: "queued" });
    const { sessions } = await (await gw.client()).call<{ sessions: Array<{ key: string; sessionId: string }> }>(
      "sessions.list",
      {},
    );
    const before = sessions.find((r) => r.key === "agent:main:telegram:group:-100")!.sessionId;
    await send(gw, mentioned("/new hello again"));
    const after = (
      await (await gw.client()).call<{ sessions: Array<{ key: string; sessionId: string }> }>("sessions.list", {})
    ).sessions.find((r) => r.key === "agent:main:telegram:group:-100")!.sessionId;
    expect(after).not.toBe(before);
    expect(fake.texts().at(-1)).toBe("Echo: hello again");
  });
});

describe("/compact through the gateway", () => {
  it("makes later turns send the summary instead of the history it replaced", async () => {
    const model = createScriptedModel([
      { text: "first answer" },
      { text: "They asked about apples." },
      { text: "second answer" },
    ]);
    // A model that is not the offline one, so /compact asks it for the summary.
    const gw = await start({ models: { "test/m": model }, config: { agents: { defaults: { model: "test/m" } } } });
    const client = await gw.client();
    const first = await client.call<{ runId: string }>("chat.send", { message: "tell me about apples" });
    await client.call("agent.wait", { runId: first.runId });
    const compacted = await client.call<{ status: string; reply: string }>("chat.send", { message: "/compact" });
    expect(compacted.status).toBe("command");
    const second = await client.call<{ runId: string }>("chat.send", { message: "and pears?" });
    await client.call("agent.wait", { runId: second.runId });
    const prompt = JSON.stringify(model.prompts[2]);
    expect(prompt).toContain("They asked about apples.");
    expect(prompt).not.toContain("tell me about apples");
    expect(prompt).toContain("and pears?");
  });
});

describe("commands from the terminal chat", () => {
  it("answers every command through chat.send with {status: command, reply}", async () => {
    const gw = await start();
    const client = await gw.client();
    const { runId } = await client.call<{ runId: string }>("chat.send", { message: "remember the milk" });
    await client.call("agent.wait", { runId });
    const chat = (message: string) => client.call<{ status: string; reply?: string }>("chat.send", { message });
    const expectations: Array<[string, string | RegExp]> = [
      ["/help", STRINGS.helpTitle],
      ["/status", "Session: agent:main:main"],
      ["/send off", STRINGS.sendSet("off")],
      ["/send on", STRINGS.sendSet("on")],
      ["/send", STRINGS.usage("/send on|off|inherit")],
      ["/context", STRINGS.contextHelp],
      ["/context list", "Tools (10): sessions_list"],
      ["/context json", '"sessionKey": "agent:main:main"'],
      ["/subagents", STRINGS.noSubagents],
      ["/subagents stop all", STRINGS.stoppedSubagents(0)],
      ["/compact", /^Compacted 2 messages/],
      ["/stop", STRINGS.aborted],
      ["/new gpt-x", 'Unknown model "gpt-x"'],
    ];
    for (const [text, expected] of expectations) {
      const result = await chat(text);
      expect(result.status, text).toBe("command");
      if (typeof expected === "string") expect(result.reply, text).toContain(expected);
      else expect(result.reply, text).toMatch(expected);
    }
  });

  it("starts a new session for /new (a turn, not a command reply) and stops a running turn with /stop", async () => {
    const model = createScriptedModel([{ text: "Hi! Fresh start." }, { text: "slow", delayMs: 20_000 }]);
    const gw = await start({ model });
    const client = await gw.client();
    const fresh = await client.call<{ status: string; runId: string }>("chat.send", { message: "/new" });
    expect(fresh.status).toBe("started");
    expect(await client.call("agent.wait", { runId: fresh.runId })).toMatchObject({
      status: "ok",
      text: "Hi! Fresh start.",
    });
    const slow = await client.call<{ runId: string }>("chat.send", { message: "think hard" });
    await expect.poll(() => model.calls.length).toBe(2);
    expect(await client.call("chat.send", { message: "/stop" })).toMatchObject({
      status: "command",
      reply: STRINGS.aborted,
    });
    expect(await client.call("agent.wait", { runId: slow.runId })).toMatchObject({ status: "aborted" });
  });
});
