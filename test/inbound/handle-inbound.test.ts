import { describe, expect, it } from "vitest";
import type { CommandDispatcher } from "../../src/commands/command-dispatcher.js";
import { InboundMessageSchema } from "../../src/routing/index.js";
import { setupPipeline } from "../support/inbound-pipeline.js";

const dm = (sender: string, text: string, messageId: string) => ({
  channel: "telegram",
  chat: { type: "direct", id: sender },
  sender: { id: sender, name: `user ${sender}` },
  messageId,
  text,
});

const inGroup = (text: string, messageId: string, fields: Record<string, unknown> = {}) => ({
  channel: "telegram",
  chat: { type: "group", id: "-100", title: "Team" },
  sender: { id: "42" },
  messageId,
  text,
  ...fields,
});

describe("createInboundPipeline", () => {
  it("runs an allowed DM on its session (the main one by default) and delivers the reply to the chat", async () => {
    const { pipeline, delivered } = await setupPipeline([{ text: "Hello!" }]);
    const result = await pipeline.handleInbound(dm("42", "hi", "m1"));
    expect(result).toMatchObject({ status: "queued", sessionKey: "agent:main:main" });
    if (result.status !== "queued") throw new Error("not queued");
    expect(await result.done).toMatchObject({ status: "ok", text: "Hello!" });
    expect(delivered.map((d) => [d.target, d.text])).toEqual([
      [{ channel: "telegram", to: "42", accountId: "default" }, "Hello!"],
    ]);
  });

  it("ignores a message it has already handled", async () => {
    const { pipeline, model, delivered } = await setupPipeline([{ text: "once" }]);
    const first = await pipeline.handleInbound(dm("42", "hi", "m1"));
    if (first.status === "queued") await first.done;
    expect(await pipeline.handleInbound(dm("42", "hi", "m1"))).toEqual({
      status: "duplicate",
      dedupeKey: "telegram:default:42:m1",
    });
    expect(model.calls).toHaveLength(1);
    expect(delivered).toHaveLength(1);
  });

  it("ignores a sender who may not talk here, with the reason, and delivers nothing", async () => {
    const { pipeline, model, delivered, logger } = await setupPipeline([]);
    expect(await pipeline.handleInbound(dm("99", "hi", "m1"))).toEqual({
      status: "ignored",
      sessionKey: "agent:main:main",
      reason: "dm-not-allowed",
    });
    expect(await pipeline.handleInbound(dm("99", "/ping", "m2"))).toMatchObject({
      status: "ignored",
      reason: "dm-not-allowed",
    });
    expect(model.calls).toEqual([]);
    expect(delivered).toEqual([]);
    expect(logger.records).toContainEqual(
      expect.objectContaining({
        message: "inbound message not allowed",
        fields: expect.objectContaining({ sender: "99" }),
      }),
    );
  });

  it("ignores a group message that does not mention the bot", async () => {
    const { pipeline, model, delivered } = await setupPipeline([]);
    expect(await pipeline.handleInbound(inGroup("anyone there?", "g1"))).toEqual({
      status: "ignored",
      sessionKey: "agent:main:telegram:group:-100",
      reason: "not-mentioned",
    });
    expect(model.calls).toEqual([]);
    expect(delivered).toEqual([]);
  });

  it("runs a group message that mentions the bot", async () => {
    const { pipeline, delivered } = await setupPipeline([{ text: "Here." }]);
    const result = await pipeline.handleInbound(inGroup("@bot anyone there?", "g1", { wasMentioned: true }));
    if (result.status !== "queued") throw new Error(`not queued: ${result.status}`);
    await result.done;
    expect(delivered.map((d) => [d.target.to, d.text])).toEqual([["-100", "Here."]]);
  });

  it("runs a command in a group without a mention and delivers its reply past the send policy", async () => {
    const { pipeline, model, delivered } = await setupPipeline([]);
    expect(await pipeline.handleInbound(inGroup("/ping", "g1"))).toEqual({
      status: "command",
      sessionKey: "agent:main:telegram:group:-100",
      reply: "pong",
    });
    expect(model.calls).toEqual([]);
    expect(delivered).toEqual([
      expect.objectContaining({
        target: { channel: "telegram", to: "-100", accountId: "default" },
        text: "pong",
        kind: "reply",
        bypassPolicy: true,
        idempotencyKey: "telegram:default:-100:g1:command",
      }),
    ]);
  });

  it("uses an explicit sessionKey instead of routing the message", async () => {
    const { pipeline, store } = await setupPipeline([{ text: "ok" }], { session: { dmScope: "per-channel-peer" } });
    const result = await pipeline.handleInbound(dm("42", "hi", "m1"), { sessionKey: "main", runId: "run-7" });
    expect(result).toMatchObject({ status: "queued", sessionKey: "agent:main:main", runId: "run-7" });
    if (result.status === "queued") await result.done;
    expect(store.get("agent:main:main")).toBeDefined();
    expect(store.get("agent:main:telegram:dm:42")).toBeUndefined();
  });

  it("refuses an explicit sessionKey that is not a key", async () => {
    const { pipeline } = await setupPipeline([]);
    await expect(pipeline.handleInbound(dm("42", "hi", "m1"), { sessionKey: "agent:" })).rejects.toMatchObject({
      code: "INVALID_SESSION_KEY",
    });
  });

  it("records a message's metadata on an existing entry without moving updatedAt", async () => {
    const { pipeline, store, clock } = await setupPipeline([{ text: "Here." }]);
    const first = await pipeline.handleInbound(inGroup("@bot hi", "g1", { wasMentioned: true }));
    if (first.status === "queued") await first.done;
    const before = store.get("agent:main:telegram:group:-100")!;
    clock.advance(60_000);
    const renamed = inGroup("chatting", "g2", { chat: { type: "group", id: "-100", title: "Renamed Team" } });
    expect(await pipeline.handleInbound(renamed)).toMatchObject({ status: "ignored", reason: "not-mentioned" });
    const after = store.get("agent:main:telegram:group:-100")!;
    expect(after.subject).toBe("Renamed Team");
    expect(after.updatedAt).toBe(before.updatedAt);
    expect(after.sessionId).toBe(before.sessionId);
  });

  it("creates no entry for a message that starts no turn", async () => {
    const { pipeline, store } = await setupPipeline([]);
    await pipeline.handleInbound(inGroup("chatting", "g1"));
    expect(store.get("agent:main:telegram:group:-100")).toBeUndefined();
  });

  // BUG (reported): the route is recorded before the access check, so with dmScope "main" a
  // stranger's DM moves the owner's main session's last route (where `agent` deliveries go).
  it("BUG: leaves the last route of a shared DM session alone for a sender who may not talk", async () => {
    const { pipeline, store } = await setupPipeline([{ text: "Hello owner." }], { session: { dmScope: "main" } });
    const owner = await pipeline.handleInbound(dm("42", "hi", "m1"));
    if (owner.status === "queued") await owner.done;
    expect(await pipeline.handleInbound(dm("99", "hi", "m2"))).toMatchObject({
      status: "ignored",
      sessionKey: "agent:main:main",
    });
    expect(store.get("agent:main:main")!.deliveryContext).toEqual({
      channel: "telegram",
      to: "42",
      accountId: "default",
    });
  });
});

describe("createInboundPipeline with its durable inbox", () => {
  it("acknowledges a message once it is stored, before its turn ends, and marks it done after", async () => {
    const { pipeline, inbox } = await setupPipeline([{ text: "slow answer", delayMs: 200 }]);
    const { result } = await pipeline.accept(dm("42", "hi", "m1"));
    expect(inbox.pending().map((e) => e.id)).toEqual(["telegram:default:42:m1"]);
    const handled = await result;
    if (handled.status !== "queued") throw new Error(`not queued: ${handled.status}`);
    await handled.done;
    expect(inbox.pending()).toEqual([]);
  });

  it("stores a platform message with the session the routing table gives it, before its turn; a client's keeps the one it chose", async () => {
    const { pipeline, inbox } = await setupPipeline([
      { text: "a", delayMs: 200 },
      { text: "b", delayMs: 200 },
      { text: "c", delayMs: 200 },
    ]);
    const stored = await Promise.all([
      pipeline.accept(dm("42", "hi", "m1")),
      pipeline.accept(inGroup("@bot hi", "m2", { wasMentioned: true })),
      pipeline.accept(dm("43", "from a client", "m3"), { sessionKey: "agent:main:webchat:dm:ops" }),
    ]);
    const byId = new Map(inbox.pending().map((e) => [e.id, e]));
    expect(byId.get("telegram:default:42:m1")?.session).toBe("agent:main:main");
    expect(byId.get("telegram:default:-100:m2")?.session).toBe("agent:main:telegram:group:-100");
    expect(byId.get("telegram:default:43:m3")).toMatchObject({ sessionKey: "agent:main:webchat:dm:ops" });
    expect(byId.get("telegram:default:43:m3")?.session).toBeUndefined();
    // Each runs where it was routed: the stored session is the one its handling routes it to.
    const results = await Promise.all(stored.map((s) => s.result));
    expect(results.map((r) => (r.status === "queued" ? r.sessionKey : r.status))).toEqual([
      "agent:main:main",
      "agent:main:telegram:group:-100",
      "agent:main:webchat:dm:ops",
    ]);
    for (const r of results) if (r.status === "queued") await r.done;
  });

  it("replays a stored message on the session routing gives it now, whatever session its row names", async () => {
    const before = await setupPipeline([]);
    const message = InboundMessageSchema.parse(dm("42", "first", "m1"));
    await before.inbox.claim("telegram:default:42:m1", message, { runId: "run-1", session: "agent:main:elsewhere" });
    const after = await setupPipeline([{ text: "answer 1" }], { dir: before.dir });
    expect(await after.pipeline.resume()).toBe(1);
    await expect.poll(() => after.delivered.map((d) => d.text)).toEqual(["answer 1"]);
    expect(after.store.get("agent:main:main")).toBeDefined();
    expect(after.store.get("agent:main:elsewhere")).toBeUndefined();
  });

  it("answers a repeat that arrives while the first copy is still running once, as that same entry", async () => {
    const { pipeline, model, delivered } = await setupPipeline([{ text: "once", delayMs: 100 }]);
    const first = await pipeline.handleInbound(dm("42", "hi", "m1"));
    expect(await pipeline.handleInbound(dm("42", "hi", "m1"))).toEqual({
      status: "duplicate",
      dedupeKey: "telegram:default:42:m1",
      pending: true,
    });
    if (first.status === "queued") await first.done;
    expect(model.calls).toHaveLength(1);
    expect(delivered.map((d) => d.text)).toEqual(["once"]);
  });

  it("replays, oldest first and with the same run id, the messages a restart interrupted", async () => {
    const before = await setupPipeline([]);
    // The first process stored two messages and died before handling them.
    await before.inbox.claim("telegram:default:42:m1", InboundMessageSchema.parse(dm("42", "first", "m1")), {
      runId: "run-1",
    });
    await before.inbox.claim("telegram:default:42:m2", InboundMessageSchema.parse(dm("42", "second", "m2")), {
      runId: "run-2",
    });
    const after = await setupPipeline([{ text: "answer 1" }, { text: "answer 2" }], { dir: before.dir });
    expect(await after.pipeline.resume()).toBe(2);
    await expect.poll(() => after.delivered.length).toBe(2);
    expect(after.delivered.map((d) => [d.text, d.idempotencyKey])).toEqual([
      ["answer 1", "run-1:reply"],
      ["answer 2", "run-2:reply"],
    ]);
    await expect.poll(() => after.inbox.pending()).toEqual([]);
    // A new copy of a replayed message (a platform redelivery) is a duplicate, not a third turn.
    expect(await after.pipeline.handleInbound(dm("42", "first", "m1"))).toMatchObject({ status: "duplicate" });
  });

  it("keeps a native command with an interaction for dedupe but does not replay it after a restart", async () => {
    const before = await setupPipeline([]);
    const command = { ...dm("42", "/ping", "n1"), command: { name: "ping", args: "" } };
    // The first process stored the command (its interaction then open) and died before handling it.
    await before.inbox.claim("telegram:default:42:n1", InboundMessageSchema.parse(command), {
      runId: "run-n1",
      interactive: true,
    });
    const after = await setupPipeline([], { dir: before.dir });
    expect(await after.pipeline.resume()).toBe(0);
    expect(after.delivered).toEqual([]);
    expect(after.inbox.pending()).toEqual([]);
    expect(after.logger.records.some((r) => r.message.includes("not replayed"))).toBe(true);
    // The platform sending it again is a duplicate, not a second run.
    expect(await after.pipeline.handleInbound(command)).toMatchObject({ status: "duplicate" });
  });

  it("only marks done a replayed message whose reply already reached the outbox", async () => {
    const before = await setupPipeline([]);
    await before.inbox.claim("telegram:default:42:m1", InboundMessageSchema.parse(dm("42", "hi", "m1")), {
      runId: "run-1",
    });
    const after = await setupPipeline([], { dir: before.dir, handedOver: (key) => key === "run-1:reply" });
    expect(await after.pipeline.resume()).toBe(0);
    expect(after.model.calls).toEqual([]);
    expect(after.inbox.pending()).toEqual([]);
  });

  it("does not write or send the interrupted attempt's user line twice when the turn is replayed", async () => {
    const perPeer = { session: { dmScope: "per-channel-peer" } };
    const before = await setupPipeline([{ text: "never finished", delayMs: 60_000 }], perPeer);
    const started = await before.pipeline.handleInbound(dm("42", "remember me", "m1"), { runId: "run-1" });
    expect(started.status).toBe("queued");
    // The interrupted attempt wrote its user line; then the process "died".
    const { transcripts, store } = before;
    await expect
      .poll(async () => {
        const entry = store.get("agent:main:telegram:dm:42");
        return entry ? (await transcripts.readTail(entry.sessionId, { limit: 10 })).messages.length : 0;
      })
      .toBe(1);
    const after = await setupPipeline([{ text: "done now" }], { dir: before.dir, ...perPeer });
    await after.pipeline.resume();
    await expect.poll(() => after.delivered.map((d) => d.text)).toEqual(["done now"]);
    const entry = after.store.get("agent:main:telegram:dm:42")!;
    const lines = (await after.transcripts.readTail(entry.sessionId, { limit: 10 })).messages;
    expect(lines.map((m) => [m.role, m.runId])).toEqual([
      ["user", "run-1"],
      ["assistant", "run-1"],
    ]);
    const prompt = JSON.stringify(after.model.prompts[0]);
    expect(prompt.split("remember me").length - 1).toBe(1);
  });

  it("handles a session's messages one after another in arrival order, though each is acknowledged at once", async () => {
    const seen: string[] = [];
    // "/slow" lasts until another session's command has run: that one must not wait for it.
    let otherRan!: () => void;
    const otherDone = new Promise<void>((resolve) => (otherRan = resolve));
    const slow: CommandDispatcher = {
      dispatch: async ({ message }) => {
        seen.push(`start ${message.text}`);
        if (message.text === "/slow") await otherDone;
        seen.push(`end ${message.text}`);
        if (message.text === "/other") otherRan();
        return { reply: "ok" };
      },
    };
    const { pipeline } = await setupPipeline([], { commands: slow, session: { dmScope: "per-channel-peer" } });
    const first = await pipeline.accept(dm("42", "/slow", "m1"));
    const second = await pipeline.accept(dm("42", "/fast", "m2"));
    const other = await pipeline.accept(dm("43", "/other", "m3"));
    await Promise.all([first.result, second.result, other.result]);
    // Another session does not wait; the same session does.
    expect(seen.indexOf("end /slow")).toBeLessThan(seen.indexOf("start /fast"));
    expect(seen.indexOf("end /other")).toBeLessThan(seen.indexOf("end /slow"));
  });

  it("does not run again a replayed command whose lines are already in the session's history", async () => {
    let runs = 0;
    const counting: CommandDispatcher = {
      dispatch: async ({ message }) => (message.text === "/count" ? { reply: `count ${++runs}` } : null),
    };
    const before = await setupPipeline([{ text: "hello" }], { commands: counting });
    const first = await before.pipeline.handleInbound(dm("42", "hi", "m1"));
    if (first.status === "queued") await first.done;
    await before.pipeline.handleInbound(dm("42", "/count", "m2"), { runId: "cmd-1" });
    expect(runs).toBe(1);
    // The process died after the command ran and was kept in the history, before its entry was marked done.
    await before.inbox.claim(
      "telegram:default:42:m2-again",
      InboundMessageSchema.parse(dm("42", "/count", "m2-again")),
      { runId: "cmd-1" },
    );
    const after = await setupPipeline([], { dir: before.dir, commands: counting });
    await after.pipeline.resume();
    expect(runs).toBe(1);
    expect(after.inbox.pending()).toEqual([]);
  });

  it("refuses something that is not an inbound message with a clear error and stores nothing", async () => {
    const { pipeline, inbox } = await setupPipeline([]);
    await expect(pipeline.accept({ channel: "telegram", chat: { type: "nope" } })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringContaining("chat.type"),
    });
    expect(inbox.pending()).toEqual([]);
  });
});
