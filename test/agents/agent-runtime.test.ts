import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { type AgentRuntimeDeps, type RuntimeEvent, createAgentRuntime } from "../../src/agents/agent-runtime.js";
import { createLanes } from "../../src/agents/lanes.js";
import { createRunRegistry } from "../../src/agents/run-registry.js";
import { parseConfig } from "../../src/config/index.js";
import { SwitchboardError, apology } from "../../src/errors.js";
import { createMemoryLogger } from "../../src/logger.js";
import { InboundMessageSchema, parseSessionKey } from "../../src/routing/index.js";
import { createAgentSessionsPool, transcriptRef } from "../../src/sessions/agent-sessions.js";
import { BARE_RESET_PROMPT } from "../../src/sessions/session-lifecycle.js";
import { capabilitiesOfAdapters } from "../fakes/capabilities.js";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { type ScriptedModel, type ScriptedStep, createScriptedModel } from "../fakes/scripted-model.js";
import { createWebchatAdapter } from "../../src/gateway/webchat-adapter.js";
import { createEventHub } from "../../src/gateway/event-hub.js";
import { onLocalState } from "../support/local-state.js";
import { readStateFile } from "../support/read-state-file.js";
import { createLocalWorkspace } from "../../src/workspace/local-workspace.js";
import { ADA, telegramDm } from "../support/telegram-dm.js";
import { recordingDeliver } from "../fakes/recording-deliver.js";

const KEY = "agent:main:telegram:dm:42";
const parsed = parseSessionKey(KEY)!;
const TARGET = { channel: "telegram", to: "42", accountId: "default" };

const dm = (text: string, messageId = "m1") => telegramDm(text, { messageId, sender: ADA });

async function setup(
  steps: ScriptedStep[],
  extra: Pick<AgentRuntimeDeps, "typing" | "capabilitiesOf" | "workspaceOf" | "chatTurnsAtOnce"> = {},
  rawConfig: Record<string, unknown> = {},
) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "sb-runtime-"));
  const { config } = parseConfig(rawConfig);
  const logger = createMemoryLogger();
  const model: ScriptedModel = createScriptedModel(steps);
  const sessions = createAgentSessionsPool(
    onLocalState(
      {
        session: config.session,
        logger,
        storePathFor: (agentId: string) => path.join(dir, "agents", agentId, "sessions", "sessions.json"),
      },
      path.join(dir, "state"),
    ),
  );
  // The stores write after a turn's end (the transcript, the state journal): closed before the folder goes.
  onTestFinished(async () => {
    await sessions.close();
    await rm(dir, { recursive: true, force: true });
  });
  const runs = createRunRegistry();
  const { delivered, deliver } = recordingDeliver();
  const events: RuntimeEvent[] = [];
  const runtime = createAgentRuntime({
    config,
    sessions,
    runs,
    logger,
    lanes: createLanes(),
    resolveModel: (ref) => ({ model, ref, offline: false }),
    deliver,
    onEvent: (event) => events.push(event),
    ...extra,
  });
  const opened = await sessions.forAgent("main");
  const transcript = async () => {
    const entry = opened.store.get(KEY)!;
    return (await opened.transcripts.readTail(transcriptRef(entry), { limit: 50 })).messages.map((m) => ({
      role: m.role,
      content: m.content,
    }));
  };
  return { config, model, runs, runtime, delivered, events, logger, store: opened.store, transcript, dir };
}

/** The text of the last user message the model was sent on call `call`. */
function lastUserText(model: ScriptedModel, call = 0): string | undefined {
  const user = model.prompts[call]!.filter((m) => m.role === "user").at(-1);
  return user?.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

describe("createAgentRuntime", () => {
  it("shows typing only where the channel's adapter declares it, and delivers the reply to every chat, the gateway's own clients included", async () => {
    const typedIn: string[] = [];
    const noTyping = createFakeChannelAdapter({ id: "sms" });
    const capabilitiesOf = capabilitiesOfAdapters(
      createFakeChannelAdapter({ id: "telegram" }),
      { ...noTyping, capabilities: { ...noTyping.capabilities, typing: false } },
      createWebchatAdapter(createEventHub()),
    );
    const { runtime, delivered } = await setup([{ text: "one" }, { text: "two" }, { text: "three" }], {
      capabilitiesOf,
      typing: (target) => {
        typedIn.push(target.channel);
        return () => undefined;
      },
    });
    for (const channel of ["telegram", "sms", "webchat"]) {
      const message = InboundMessageSchema.parse({ ...dm("hi", `m-${channel}`), channel });
      await runtime.enqueue({ parsed, agentId: "main", message }).done;
    }
    expect(typedIn).toEqual(["telegram"]);
    expect(delivered.map((d) => [d.target.channel, d.text])).toEqual([
      ["telegram", "one"],
      ["sms", "two"],
      ["webchat", "three"],
    ]);
  });

  it("appends the user message and the reply to the transcript and delivers the reply to the message's chat", async () => {
    const { runtime, delivered, transcript, events } = await setup([{ text: "Hello Ada!" }]);
    const { runId, done } = runtime.enqueue({ parsed, agentId: "main", message: dm("hi there") });
    expect(await done).toMatchObject({ runId, sessionKey: KEY, status: "ok", text: "Hello Ada!" });
    expect(await transcript()).toEqual([
      { role: "user", content: "hi there" },
      { role: "assistant", content: [{ type: "text", text: "Hello Ada!" }] },
    ]);
    expect(delivered).toEqual([
      expect.objectContaining({
        sessionKey: parsed,
        target: TARGET,
        text: "Hello Ada!",
        kind: "reply",
        idempotencyKey: `${runId}:reply`,
      }),
    ]);
    // The run's end carries its state only; the reply went out as a delivery.
    expect(events).toEqual([{ type: "chat", sessionKey: KEY, runId, state: "final" }]);
  });

  it("gives the model the session's earlier turns as history", async () => {
    const { runtime, model } = await setup([{ text: "first answer" }, { text: "second answer" }]);
    await runtime.enqueue({ parsed, agentId: "main", message: dm("one", "m1") }).done;
    await runtime.enqueue({ parsed, agentId: "main", message: dm("two", "m2") }).done;
    const texts = model.prompts[1]!.filter((m) => m.role !== "system").map((m) =>
      (m.content as Array<{ text?: string }>).map((p) => p.text).join(""),
    );
    expect(texts).toEqual(["one", "first answer", "two"]);
  });

  it("puts an edit of a workspace file into the next turn's system prompt", async () => {
    const workspace = await mkdtemp(path.join(os.tmpdir(), "sb-runtime-workspace-"));
    onTestFinished(() => rm(workspace, { recursive: true, force: true }));
    const { runtime, model } = await setup([{ text: "a" }, { text: "b" }, { text: "c" }], {
      workspaceOf: () => createLocalWorkspace(workspace),
    });
    const systemOf = (call: number) =>
      model.prompts[call]!.filter((m) => m.role === "system")
        .map((m) => m.content)
        .join("\n");
    await writeFile(path.join(workspace, "AGENTS.md"), "Rule one.");
    await runtime.enqueue({ parsed, agentId: "main", message: dm("one", "m1") }).done;
    await writeFile(path.join(workspace, "AGENTS.md"), "Rule two.");
    await runtime.enqueue({ parsed, agentId: "main", message: dm("two", "m2") }).done;
    await runtime.enqueue({ parsed, agentId: "main", message: dm("three", "m3") }).done;
    expect(systemOf(0)).toContain("## AGENTS.md\nRule one.");
    expect(systemOf(1)).toContain("## AGENTS.md\nRule two.");
    expect(systemOf(1)).not.toContain("Rule one.");
    expect(systemOf(2)).toContain("## AGENTS.md\nRule two.");
  });

  it("records the turn's token usage and model on the entry, on disk by the time the turn has ended", async () => {
    const { runtime, store, config, dir } = await setup([
      { text: "ok", usage: { inputTokens: 120, outputTokens: 30 } },
    ]);
    await runtime.enqueue({ parsed, agentId: "main", message: dm("count me") }).done;
    const recorded = {
      inputTokens: 120,
      outputTokens: 30,
      totalTokens: 150,
      model: config.agents.defaults.model,
      systemSent: true,
      abortedLastRun: false,
    };
    expect(store.get(KEY)).toMatchObject(recorded);
    // The turn does not wait for each of its store writes on its own, but for all of them before it ends.
    const onDisk = await readStateFile(
      path.join(dir, "agents", "main", "sessions", "sessions.json"),
      path.join(dir, "state"),
    );
    expect(onDisk[KEY]).toMatchObject({ ...recorded, lastTo: "42" });
  });

  it("ends a turn whose store writes could not be made durable in an error, never as ok", async () => {
    const { runtime, dir, delivered } = await setup([{ text: "ok" }]);
    // The journal's folder becomes a plain file: no write can succeed.
    await rm(path.join(dir, "state"), { recursive: true, force: true });
    await writeFile(path.join(dir, "state"), "not a folder");
    const record = await runtime.enqueue({ parsed, agentId: "main", message: dm("lost?") }).done;
    expect(record.status).toBe("error");
    // The reply reached the gate only with the turn's start as what must be stored first, which
    // failed: the gate then sends nothing (delivery-gate.test.ts); the chat gets the error notice.
    expect(delivered.map((d) => d.kind)).toEqual(["reply", "notice"]);
    await expect(delivered[0]!.after).rejects.toThrow();
  });

  it("delivers nothing with deliver: false, and still records the reply", async () => {
    const { runtime, delivered, transcript } = await setup([{ text: "kept inside" }]);
    const { done } = runtime.enqueue({ parsed, agentId: "main", message: dm("quiet"), deliver: false });
    expect(await done).toMatchObject({ status: "ok", text: "kept inside" });
    expect(delivered).toEqual([]);
    expect((await transcript()).map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("delivers a prompt's reply to the given target", async () => {
    const { runtime, delivered } = await setup([{ text: "pong" }]);
    const target = { channel: "discord", to: "c-9" };
    await runtime.enqueue({ parsed, agentId: "main", prompt: "ping", deliver: target }).done;
    expect(delivered.map((d) => [d.target, d.text])).toEqual([[target, "pong"]]);
  });

  it("ends a running turn as aborted on abortSession, clears the queued ones and marks abortedLastRun", async () => {
    const { runtime, model, delivered, store } = await setup([{ text: "too late", delayMs: 60_000 }]);
    const running = runtime.enqueue({ parsed, agentId: "main", message: dm("slow", "m1") });
    const queued = runtime.enqueue({ parsed, agentId: "main", message: dm("next", "m2") });
    await vi.waitFor(() => expect(model.calls).toHaveLength(1));
    expect(runtime.abortSession(KEY)).toEqual({ runIds: [running.runId, queued.runId], cleared: 1 });
    expect(await running.done).toMatchObject({ status: "aborted" });
    expect(await queued.done).toMatchObject({ status: "aborted" });
    expect(store.get(KEY)!.abortedLastRun).toBe(true);
    expect(model.calls).toHaveLength(1);
    expect(delivered).toEqual([]);
  });

  it("runs at most agents.defaults.maxConcurrent chat turns across sessions: the next waits until one ends", async () => {
    let endFirst!: () => void;
    const first = new Promise<void>((resolve) => (endFirst = resolve));
    const { runtime, model, runs } = await setup(
      [{ text: "one", until: first }, { text: "two" }],
      {},
      {
        agents: { defaults: { maxConcurrent: 1 } },
      },
    );
    const chat = (n: number) =>
      runtime.enqueue({
        parsed: parseSessionKey(`agent:main:telegram:dm:${n}`)!,
        agentId: "main",
        message: dm(`m${n}`, `m${n}`),
      });
    const one = chat(1);
    const two = chat(2);
    await vi.waitFor(() => expect(model.calls).toHaveLength(1));
    expect(runs.get(two.runId)!.status).toBe("queued");
    expect(runtime.chatSlots()).toMatchObject({ held: 1, waiting: 1 });
    endFirst();
    expect(await one.done).toMatchObject({ status: "ok", text: "one" });
    expect(await two.done).toMatchObject({ status: "ok", text: "two" });
  });

  it("runs at most chatTurnsAtOnce chat turns across sessions; the next starts when one ends; other turns are not counted", async () => {
    let endFirst!: () => void;
    const first = new Promise<void>((resolve) => (endFirst = resolve));
    const { runtime, model, runs } = await setup(
      [
        // Both chat turns wait for the same gate: which of them calls the model first is not fixed.
        { text: "one", until: first },
        { text: "two", until: first },
        { text: "from a tool" },
        { text: "three" },
      ],
      { chatTurnsAtOnce: 2 },
    );
    const chat = (n: number, text: string) =>
      runtime.enqueue({
        parsed: parseSessionKey(`agent:main:telegram:dm:${n}`)!,
        agentId: "main",
        message: dm(text, `m${n}`),
      });
    const one = chat(1, "first");
    chat(2, "second");
    const three = chat(3, "third");
    await vi.waitFor(() => expect(model.calls).toHaveLength(2));
    // A turn no chat message started (sessions_send, cron, a gateway client) runs while both slots are held.
    const internal = runtime.enqueue({ parsed: parseSessionKey("agent:main:main")!, agentId: "main", prompt: "ping" });
    expect(await internal.done).toMatchObject({ status: "ok", text: "from a tool" });
    expect(runs.get(three.runId)!.status).toBe("queued");
    expect(model.calls).toHaveLength(3);
    endFirst();
    expect(await one.done).toMatchObject({ status: "ok" });
    expect(await three.done).toMatchObject({ status: "ok", text: "three" });
    expect(lastUserText(model, 3)).toBe("third");
  });

  it("ends a chat turn that waits for a slot as aborted on abortSession, without waiting for the slot", async () => {
    const { runtime, model, delivered } = await setup([{ text: "busy", until: new Promise(() => {}) }], {
      chatTurnsAtOnce: 1,
    });
    runtime.enqueue({ parsed: parseSessionKey("agent:main:telegram:dm:1")!, agentId: "main", message: dm("a", "m1") });
    const waiting = runtime.enqueue({ parsed, agentId: "main", message: dm("b", "m2") });
    await vi.waitFor(() => expect(model.calls).toHaveLength(1));
    expect(runtime.abortSession(KEY).runIds).toEqual([waiting.runId]);
    expect(await waiting.done).toMatchObject({ status: "aborted" });
    expect(model.calls).toHaveLength(1);
    expect(delivered).toEqual([]);
  });

  it("ends a turn that throws unexpectedly as error: the chat gets an apology with an error id, the log the whole error", async () => {
    const { runtime, delivered, events, logger } = await setup([{ error: new Error("model down at 10.0.0.7") }]);
    const { runId, done } = runtime.enqueue({ parsed, agentId: "main", message: dm("hi") });
    const run = await done;
    expect(run).toMatchObject({
      status: "error",
      error: expect.stringMatching(/^Sorry, .*\(error id [0-9a-f]{8}\)\.$/),
    });
    const errorId = /error id ([0-9a-f]{8})/.exec(run.error!)![1]!;
    expect(delivered).toEqual([
      expect.objectContaining({
        target: TARGET,
        text: `⚠️ The agent failed: ${apology(errorId)}`,
        kind: "notice",
        idempotencyKey: `${runId}:error`,
      }),
    ]);
    expect(JSON.stringify(delivered)).not.toContain("10.0.0.7");
    expect(events).toEqual([{ type: "chat", sessionKey: KEY, runId, state: "error", error: apology(errorId) }]);
    expect(logger.records).toContainEqual(
      expect.objectContaining({
        level: "error",
        message: "agent run failed",
        fields: expect.objectContaining({
          errorId,
          runId,
          err: expect.objectContaining({ message: "model down at 10.0.0.7", stack: expect.stringContaining("Error") }),
        }),
      }),
    );
  });

  it("tells the chat a known error's own message, such as a model that cannot run", async () => {
    const failure = new SwitchboardError("MODEL_FAILED", "No API key for openai/gpt-4o. Set OPENAI_API_KEY.");
    const { runtime, delivered } = await setup([{ error: failure }]);
    const { done } = runtime.enqueue({ parsed, agentId: "main", message: dm("hi") });
    expect(await done).toMatchObject({ status: "error", error: failure.message });
    expect(delivered).toEqual([expect.objectContaining({ text: `⚠️ The agent failed: ${failure.message}` })]);
  });

  it("ends a turn that outlives timeoutMs as timeout and says so", async () => {
    const { runtime, delivered } = await setup([{ text: "never", delayMs: 60_000 }]);
    const { done } = runtime.enqueue({ parsed, agentId: "main", message: dm("hi"), timeoutMs: 20 });
    expect(await done).toMatchObject({ status: "timeout", error: "timeout" });
    expect(delivered.map((d) => [d.kind, d.text])).toEqual([["notice", "⚠️ The agent took too long and was stopped."]]);
  });

  it("runs the greeting prompt for a bare /new from a sender who may reset", async () => {
    const { runtime, model, delivered, transcript } = await setup([{ text: "first" }, { text: "Hi! What next?" }]);
    await runtime.enqueue({ parsed, agentId: "main", message: dm("hello", "m1") }).done;
    await runtime.enqueue({
      parsed,
      agentId: "main",
      message: dm("/new", "m2"),
      reset: { firstMessage: "", said: "/new" },
    }).done;
    expect(lastUserText(model, 1)).toBe(BARE_RESET_PROMPT);
    // The new session starts empty: the old turn is not in the greeting's context.
    expect(model.prompts[1]!.filter((m) => m.role !== "system")).toHaveLength(1);
    expect(await transcript()).toEqual([
      { role: "user", content: "/new" },
      { role: "assistant", content: [{ type: "text", text: "Hi! What next?" }] },
    ]);
    expect(delivered.at(-1)!.text).toBe("Hi! What next?");
  });

  it("passes /new through as text from a sender who may not reset", async () => {
    const { runtime, model } = await setup([{ text: "what?" }]);
    await runtime.enqueue({ parsed, agentId: "main", message: dm("/new") }).done;
    expect(lastUserText(model)).toBe("/new");
  });

  it("runs a runId once when it is enqueued twice", async () => {
    const { runtime, model, delivered } = await setup([{ text: "once", delayMs: 5 }]);
    const first = runtime.enqueue({ runId: "run-1", parsed, agentId: "main", message: dm("hi") });
    const second = runtime.enqueue({ runId: "run-1", parsed, agentId: "main", message: dm("hi") });
    expect(second.runId).toBe("run-1");
    expect(await first.done).toMatchObject({ runId: "run-1", status: "ok", text: "once" });
    expect(await second.done).toMatchObject({ runId: "run-1", status: "ok", text: "once" });
    const third = runtime.enqueue({ runId: "run-1", parsed, agentId: "main", message: dm("hi") });
    expect(await third.done).toMatchObject({ status: "ok", text: "once" });
    expect(model.calls).toHaveLength(1);
    expect(delivered).toHaveLength(1);
  });
});
