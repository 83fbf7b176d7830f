// sessions_send: docs/tools.md, driven through invokeTool on a real gateway core (split from the session
// tools suite by tool). A note in parentheses in a test title gives the reason for a rule where it is not obvious.
import { describe, expect, it } from "vitest";
import { storedRunId } from "../../src/agents/uuid-v5.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { type ToolHarness, type ToolHarnessOptions, useToolHarnesses } from "../support/tool-harness.js";
import { UUID, unknownSession } from "../support/session-tool-fixtures.js";

let h: ToolHarness;
const harness = useToolHarnesses();
const start = async (options: ToolHarnessOptions = {}) => (h = await harness(options));

describe("sessions_send", () => {
  const target = "agent:main:telegram:dm:42";

  it("returns accepted at once with timeoutSeconds 0", async () => {
    const model = createScriptedModel([{ text: "done", delayMs: 200 }, { text: "ANNOUNCE_SKIP" }]);
    await start({ model });
    await h.seed({ key: target });
    const result = await h.invoke(
      "sessions_send",
      { sessionKey: target, message: "ping", timeoutSeconds: 0 },
      h.owner(),
    );
    expect(result).toEqual({
      runId: expect.stringMatching(new RegExp(`^${UUID}$`)),
      status: "accepted",
      sessionKey: target,
      delivery: { status: "pending", mode: "announce" },
    });
    expect(h.core.runs.get(result.runId)?.status).toMatch(/^(queued|running)$/);
    await expect.poll(() => model.calls.length).toBe(2);
  });

  it("waits for the target run's own reply", async () => {
    const model = createScriptedModel([{ text: "done" }, { text: "ANNOUNCE_SKIP" }]);
    await start({ model });
    await h.seed({ key: target });
    const result = await h.invoke(
      "sessions_send",
      { sessionKey: target, message: "wait", timeoutSeconds: 5 },
      h.owner(),
    );
    expect(result).toEqual({
      runId: expect.any(String),
      status: "ok",
      reply: "done",
      sessionKey: target,
      delivery: { status: "pending", mode: "announce" },
    });
    await expect.poll(() => model.calls.length).toBe(2);
  });

  it("runs the message in the session a sessionId names", async () => {
    const model = createScriptedModel([{ text: "done" }, { text: "ANNOUNCE_SKIP" }]);
    await start({ model });
    await h.seed({ key: "agent:main:discord:channel:123", entry: { sessionId: "sess-send" } });
    const result = await h.invoke(
      "sessions_send",
      { sessionKey: "sess-send", message: "ping", timeoutSeconds: 0 },
      h.owner(),
    );
    expect(result).toMatchObject({ status: "accepted", sessionKey: "agent:main:discord:channel:123" });
    expect(h.core.runs.get(result.runId)?.sessionKey).toBe("agent:main:discord:channel:123");
    await expect.poll(() => model.calls.length).toBe(2);
  });

  it("returns timeout with an error when the reply does not come in time, and the run goes on (a timeout always sets error)", async () => {
    const model = createScriptedModel([{ text: "late", delayMs: 1_500 }, { text: "ANNOUNCE_SKIP" }]);
    await start({ model });
    await h.seed({ key: target });
    const result = await h.invoke(
      "sessions_send",
      { sessionKey: target, message: "slow", timeoutSeconds: 1 },
      h.owner(),
    );
    expect(result).toEqual({
      runId: expect.any(String),
      status: "timeout",
      error: expect.stringContaining("1s"),
      sessionKey: target,
    });
    expect(await h.core.runs.wait(result.runId, 5_000)).toMatchObject({ status: "ok", text: "late" });
    await expect.poll(() => model.calls.length).toBe(2);
  });

  it("answers a repeated call (the same callId of a replayed caller) with the reply of the turn it already ran, not accepted", async () => {
    const model = createScriptedModel([{ text: "done" }, { text: "ANNOUNCE_SKIP" }]);
    await start({ model });
    await h.seed({ key: target });
    const caller = { ...h.owner(), callId: "run-9:0" };
    const first = await h.invoke("sessions_send", { sessionKey: target, message: "ping", timeoutSeconds: 5 }, caller);
    expect(first).toMatchObject({ status: "ok", reply: "done" });
    // Named by its key: a copy of this call on another gateway names the same run.
    expect(first.runId).toBe(storedRunId("tool", "switchboard", "tool:run-9:0"));
    await h.core.idle();
    const again = await h.invoke("sessions_send", { sessionKey: target, message: "ping", timeoutSeconds: 5 }, caller);
    expect(again).toEqual({ ...first, runId: first.runId });
    expect(model.calls).toHaveLength(2);
  });

  it("returns error with an error id when the target run fails unexpectedly, and logs the whole error under it", async () => {
    await start({ model: createScriptedModel([{ error: new Error("model exploded") }]) });
    await h.seed({ key: target });
    const result = await h.invoke("sessions_send", { sessionKey: target, message: "hi", timeoutSeconds: 5 }, h.owner());
    expect(result).toMatchObject({
      status: "error",
      error: expect.stringMatching(/error id [0-9a-f]{8}/),
      sessionKey: target,
    });
    expect((result as { error: string }).error).not.toContain("model exploded");
    const errorId = /error id ([0-9a-f]{8})/.exec((result as { error: string }).error)![1];
    expect(h.logger.records).toContainEqual(
      expect.objectContaining({
        fields: expect.objectContaining({ errorId, err: expect.objectContaining({ message: "model exploded" }) }),
      }),
    );
  });

  it("runs a target whose sendPolicy is deny and returns its reply (sendPolicy gates delivery only)", async () => {
    const model = createScriptedModel([{ text: "still here" }, { text: "ANNOUNCE_SKIP" }]);
    await start({ model });
    await h.seed({ key: target, entry: { sendPolicy: "deny" } });
    expect(
      await h.invoke("sessions_send", { sessionKey: target, message: "hi", timeoutSeconds: 5 }, h.owner()),
    ).toMatchObject({ status: "ok", reply: "still here" });
    await expect.poll(() => model.calls.length).toBe(2);
  });

  it("refuses another agent's session while agent-to-agent is disabled, before any run (hidden = missing)", async () => {
    const model = createScriptedModel([]);
    await start({ model, config: { agents: { list: [{ id: "main" }, { id: "other" }] } } });
    await h.seed({ key: "agent:other:main" });
    const result = await h.invoke(
      "sessions_send",
      { sessionKey: "agent:other:main", message: "hi", timeoutSeconds: 0 },
      h.caller("agent:main:main"),
    );
    expect(result).toEqual({ status: "error", error: unknownSession("agent:other:main") });
    expect(h.core.runs.recent()).toEqual([]);
    expect(model.calls).toHaveLength(0);
  });

  it("refuses a send to the caller's own session", async () => {
    await start({ model: createScriptedModel([]) });
    await h.seed({ key: "agent:main:main" });
    expect(await h.invoke("sessions_send", { sessionKey: "main", message: "hi" }, h.caller("agent:main:main"))).toEqual(
      { status: "error", error: expect.stringContaining("cannot send to itself") },
    );
    expect(h.core.runs.recent()).toEqual([]);
  });

  it.each([
    [
      "no sessionKey (label lookup is not offered)",
      { message: "hello" },
      /^invalid arguments for sessions_send: sessionKey: /,
    ],
    [
      "both sessionKey and label (label is an unknown field)",
      { sessionKey: "main", label: "worker", message: "hello" },
      /^invalid arguments for sessions_send: \(root\): .*"label"/,
    ],
    ["a blank message", { sessionKey: "main", message: "   " }, /^invalid arguments for sessions_send: message: /],
    [
      "a negative timeoutSeconds",
      { sessionKey: "main", message: "hi", timeoutSeconds: -1 },
      /^invalid arguments for sessions_send: timeoutSeconds: /,
    ],
    [
      "a timeoutSeconds over an hour",
      { sessionKey: "main", message: "hi", timeoutSeconds: 3_601 },
      /^invalid arguments for sessions_send: timeoutSeconds: /,
    ],
  ])("rejects %s before any run", async (_name, args, error) => {
    await start({ model: createScriptedModel([]) });
    await h.seed({ key: "agent:main:main" });
    expect(await h.invoke("sessions_send", args, h.owner())).toEqual({
      status: "error",
      error: expect.stringMatching(error),
    });
    expect(h.core.runs.recent()).toEqual([]);
  });

  it("stores a timeoutSeconds 0 turn in the target's inbox: a gateway that dies during it replays it after the restart, once, and the same callId then runs nothing", async () => {
    let release = () => {};
    const hanging = new Promise<void>((resolve) => (release = resolve));
    // The first gateway's model does not answer before the "crash": the target turn is cut off mid-run.
    const dying = createScriptedModel([{ text: "too late", until: hanging }]);
    const first = await start({ model: dying });
    await h.seed({ key: target });
    const caller = { ...h.owner(), callId: "run-7:1" };
    const sent = await h.invoke("sessions_send", { sessionKey: target, message: "ping", timeoutSeconds: 0 }, caller);
    expect(sent).toMatchObject({ status: "accepted", sessionKey: target });
    expect(first.core.inbox.pending().map((entry) => entry.startedTurn?.text)).toEqual(["ping"]);
    await expect.poll(() => dying.calls.length).toBe(1);

    // A new gateway on the same state (the first one is left as a kill leaves it): it replays the stored turn.
    const second = await start({
      home: first.home,
      model: createScriptedModel([{ text: "pong" }, { text: "ANNOUNCE_SKIP" }]),
    });
    expect(await second.core.pipeline.resume()).toBe(1);
    expect(await second.core.runs.wait(sent.runId, 5_000)).toMatchObject({ status: "ok", text: "pong" });
    await second.core.idle();
    const again = await second.invoke(
      "sessions_send",
      { sessionKey: target, message: "ping", timeoutSeconds: 0 },
      caller,
    );
    expect(again).toMatchObject({ runId: sent.runId, status: "accepted" });
    await second.core.idle();
    const history = await second.invoke("sessions_history", { sessionKey: target }, second.owner());
    // The message once, its reply once (then the announce step of the reply-back flow, under its own run).
    const ofRun = history.messages.filter((m: { runId?: string }) => m.runId === sent.runId);
    expect(ofRun.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
    release();
  });
});
