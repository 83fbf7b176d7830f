// The agent-to-agent flow after a sessions_send (docs/tools.md "sessions_send"), on a real gateway core:
// every step (reply-back turns, the announce) is a stored turn of source `a2a` under the dedupe key
// `a2a:<primary run id>:<n|announce>`, so a restart resumes at the first step not done and a step
// that ran never runs again; REPLY_SKIP, ANNOUNCE_SKIP, maxPingPongTurns and the hop budget as before.
import { describe, expect, it } from "vitest";
import { storedRunId } from "../../src/agents/uuid-v5.js";
import { InboxWriteError } from "../../src/inbound/inbox.js";
import { type ManualClock, createManualClock } from "../fakes/manual-clock.js";
import { type ScriptedModel, type ScriptedStep, createScriptedModel } from "../fakes/scripted-model.js";
import { type ToolHarness, useToolHarnesses } from "../support/tool-harness.js";

const harness = useToolHarnesses();
const A = "agent:a:main";
const B = "agent:b:main";

/** Agents a and b of one model, agent-to-agent on, sessions a and b seeded. */
async function start(
  model: ScriptedModel,
  agentToAgent: Record<string, number> = {},
  home?: string,
  timers?: ManualClock["timers"],
) {
  const h = await harness({
    model,
    ...(home && { home }),
    ...(timers && { timers }),
    config: {
      agents: { list: [{ id: "a", default: true }, { id: "b" }] },
      tools: { agentToAgent: { enabled: true } },
      session: { agentToAgent: { maxPingPongTurns: 2, ...agentToAgent } },
    },
  });
  if (!home) for (const key of [A, B]) await h.seed({ key });
  return h;
}

/** Session a sends "what is 2+2?" to b and waits for b's reply; returns the primary run id. */
async function send(h: ToolHarness): Promise<string> {
  const caller = h.caller(A, { owner: true });
  const sent = await h.invoke("sessions_send", { sessionKey: B, message: "what is 2+2?", timeoutSeconds: 5 }, caller);
  expect(sent).toMatchObject({ status: "ok", reply: "4" });
  return sent.runId;
}

/** A session's user lines with the sender, trace id and hop their provenance names. */
async function userLines(h: ToolHarness, sessionKey: string) {
  const { messages } = await h.invoke("sessions_history", { sessionKey }, h.owner("a"));
  return (messages as Array<{ role: string; content: unknown; provenance?: Record<string, any> }>)
    .filter((m) => m.role === "user")
    .map(({ content, provenance: p }) => ({ content, sessionKey: p?.sessionKey, hop: p?.hop, traceId: p?.traceId }));
}

/** The system prompt of each model call, in call order. */
const systems = (model: ScriptedModel) =>
  model.prompts.map((prompt) =>
    prompt
      .filter((m) => m.role === "system")
      .map((m) => String(m.content))
      .join("\n"),
  );

const STEP1 = "Current agent: Agent 1 (requester). Turn 1 of 2.";
const STEP2 = "Current agent: Agent 2 (target). Turn 2 of 2.";
const ANNOUNCE = "Agent-to-agent announce step:";
const NO_ROUTE = "agent-to-agent announce has no chat to go to (the target session has no route)";
const logged = (h: ToolHarness, msg: string) => h.logger.records.filter((r) => r.message === msg);

describe("the agent-to-agent flow after sessions_send", () => {
  it("stores each step in the inbox of the session it runs in, and runs them in order: requester turn 1, target turn 2, the announce", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const steps: ScriptedStep[] = [
      { text: "4" },
      { text: "and 3+3?" },
      { text: "6", until: held },
      { text: "2+2=4, 3+3=6" },
    ];
    const model = createScriptedModel(steps);
    const h = await start(model);
    const runId = await send(h);
    // Turn 2 runs (its model call is held): it is stored in b's inbox with the flow's state.
    await expect.poll(() => model.calls.length).toBe(3);
    const pending = h.core.inbox.pending().filter((entry) => entry.startedTurn?.source === "a2a");
    expect(pending).toEqual([
      expect.objectContaining({
        dedupeKey: `a2a:${runId}:2`,
        // Named by its key: every gateway that stores this step names the same run.
        runId: storedRunId("a2a", "switchboard", `a2a:${runId}:2`),
        startedTurn: expect.objectContaining({
          sessionKey: B,
          text: "and 3+3?",
          provenance: expect.objectContaining({ kind: "session", sessionKey: A, hop: 3 }),
          input: expect.objectContaining({ step: 2, hop: 3, flow: expect.objectContaining({ primaryRunId: runId }) }),
        }),
      }),
    ]);
    release();
    await expect.poll(() => logged(h, NO_ROUTE).length).toBe(1);
    await h.core.idle();
    const asked = systems(model);
    expect(asked[1]).toContain(STEP1);
    expect(asked[2]).toContain(STEP2);
    expect(asked[3]).toContain(ANNOUNCE);
    expect(asked[3]).toContain("Latest reply: 6");
    expect(model.calls).toHaveLength(4);
    expect(h.core.inbox.pending()).toEqual([]);
    // Every message of the exchange carries its sender, the one trace id and its hop.
    const lines = [...(await userLines(h, A)), ...(await userLines(h, B))].sort((x, y) => x.hop - y.hop);
    expect(lines[0]!.traceId).toEqual(expect.any(String));
    expect(lines).toEqual([
      { content: "what is 2+2?", sessionKey: A, hop: 1, traceId: lines[0]!.traceId },
      { content: "4", sessionKey: B, hop: 2, traceId: lines[0]!.traceId },
      { content: "and 3+3?", sessionKey: A, hop: 3, traceId: lines[0]!.traceId },
      { content: "Agent-to-agent announce step.", sessionKey: A, hop: 4, traceId: lines[0]!.traceId },
    ]);
  });

  it("resumes after a restart at the first step not done: the steps before it do not run again, the rest run once", async () => {
    const never = new Promise<void>(() => {});
    const dying = createScriptedModel([{ text: "4" }, { text: "and 3+3?" }, { text: "never said", until: never }]);
    const first = await start(dying);
    const runId = await send(first);
    await expect.poll(() => dying.calls.length).toBe(3);

    // A new gateway on the same state (the first left as a kill leaves it): only turn 2 is replayed.
    const model = createScriptedModel([{ text: "6" }, { text: "2+2=4, 3+3=6" }]);
    const second = await start(model, {}, first.home);
    expect(await second.core.pipeline.resume()).toBe(1);
    await expect.poll(() => logged(second, NO_ROUTE).length).toBe(1);
    await second.core.idle();
    expect(systems(model).map((s) => [s.includes(STEP2), s.includes(ANNOUNCE)])).toEqual([
      [true, false],
      [false, true],
    ]);

    // A step that ran, started again under its key (as a replay of the turn before it would): nothing runs.
    for (const step of [1, 2, "announce"]) {
      const again = await second.deps.startTurn(
        { source: "a2a", sessionKey: B, text: "again", owner: true, provenance: { kind: "session" }, input: {} },
        { dedupeKey: `a2a:${runId}:${step}` },
      );
      expect(again.status).toBe("done");
    }
    await second.core.idle();
    expect(model.calls).toHaveLength(2);
  });

  it("ends the loop at REPLY_SKIP, and the announce sees the reply before it", async () => {
    const model = createScriptedModel([{ text: "4" }, { text: "REPLY_SKIP" }, { text: "2+2=4" }]);
    const h = await start(model);
    await send(h);
    await expect.poll(() => logged(h, NO_ROUTE).length).toBe(1);
    await h.core.idle();
    expect(model.calls).toHaveLength(3);
    expect(systems(model)[2]).toContain(ANNOUNCE);
    expect(systems(model)[2]).toContain("Latest reply: 4");
  });

  it("posts nothing when the announce step answers ANNOUNCE_SKIP", async () => {
    const model = createScriptedModel([{ text: "4" }, { text: "REPLY_SKIP" }, { text: "ANNOUNCE_SKIP" }]);
    const h = await start(model);
    await send(h);
    await expect.poll(() => model.calls.length).toBe(3);
    await h.core.idle();
    expect(logged(h, NO_ROUTE)).toEqual([]);
  });

  it("goes straight to the announce with maxPingPongTurns 0", async () => {
    const model = createScriptedModel([{ text: "4" }, { text: "2+2=4" }]);
    const h = await start(model, { maxPingPongTurns: 0 });
    await send(h);
    await expect.poll(() => logged(h, NO_ROUTE).length).toBe(1);
    await h.core.idle();
    expect(systems(model)[1]).toContain(ANNOUNCE);
    expect(model.calls).toHaveLength(2);
  });

  it("stops at the hop budget: no step past it and no announce", async () => {
    const model = createScriptedModel([{ text: "4" }, { text: "and 3+3?" }, { text: "6" }]);
    const h = await start(model, { maxPingPongTurns: 5, maxHops: 3 });
    await send(h);
    await expect.poll(() => logged(h, "agent-to-agent chain reached its hop budget; no announce").length).toBe(1);
    await h.core.idle();
    expect(model.calls).toHaveLength(3);
    expect(logged(h, NO_ROUTE)).toEqual([]);
  });

  it.each([
    { left: "the sessions_send turn", stored: "1", first: ["4"], after: [STEP1, STEP2, ANNOUNCE] },
    { left: "reply step 1", stored: "2", first: ["4", "and 3+3?"], after: [STEP2, ANNOUNCE] },
  ])(
    "does not run $left again after a kill that came once its next step was stored (one model call per step)",
    async (c) => {
      const never = new Promise<void>(() => {});
      const dying = createScriptedModel([...c.first.map((text) => ({ text })), { text: "never said", until: never }]);
      const first = await start(dying);
      // The kill: the next step is on disk (and running), the turn before it never marked done.
      const storeTurn = first.deps.startTurn;
      first.deps.startTurn = async (turn, options) => {
        const started = await storeTurn(turn, options);
        if (options?.dedupeKey?.endsWith(`:${c.stored}`)) await never;
        return started;
      };
      await send(first);
      await expect.poll(() => dying.calls.length).toBe(c.first.length + 1);

      const model = createScriptedModel(
        [{ text: "and 3+3?" }, { text: "6" }, { text: "2+2=4, 3+3=6" }].slice(-c.after.length),
      );
      const second = await start(model, {}, first.home);
      expect(await second.core.pipeline.resume()).toBe(2);
      await expect.poll(() => logged(second, NO_ROUTE).length).toBe(1);
      await second.core.idle();
      expect(systems(model).map((s) => c.after.findIndex((step) => s.includes(step)))).toEqual(
        c.after.map((_, i) => i),
      );
      expect(second.core.inbox.pending()).toEqual([]);
    },
  );

  it("retries storing the next step after a storage failure (1 s, then 2 s, jittered): the announce arrives once", async () => {
    const clock = createManualClock();
    const model = createScriptedModel([{ text: "4" }, { text: "2+2=4" }]);
    const h = await start(model, { maxPingPongTurns: 0 }, undefined, clock.timers);
    const storeTurn = h.deps.startTurn;
    let failures = 0;
    h.deps.startTurn = (turn, options) => {
      if (options?.dedupeKey?.endsWith(":announce") && failures < 2) {
        failures += 1;
        return Promise.reject(new InboxWriteError(new Error("the database is away")));
      }
      return storeTurn(turn, options);
    };
    const retried = () => logged(h, "storing a turn's next write failed; retrying").map((r) => r.fields);
    await send(h);
    for (const attempt of [1, 2]) {
      await expect.poll(() => retried().length).toBe(attempt);
      expect(model.calls).toHaveLength(1);
      const wait = retried()[attempt - 1]!.retryInMs as number;
      expect(wait).toBeGreaterThanOrEqual(500 * 2 ** (attempt - 1));
      expect(wait).toBeLessThanOrEqual(1_000 * 2 ** (attempt - 1));
      clock.advance(wait);
    }
    await expect.poll(() => logged(h, NO_ROUTE).length).toBe(1);
    await h.core.idle();
    expect(systems(model)[1]).toContain(ANNOUNCE);
    expect(model.calls).toHaveLength(2);
    expect(h.core.inbox.pending()).toEqual([]);
  });

  it("leaves the turn not done when a stop comes while its next step waits for a retry: the next start replays it", async () => {
    const clock = createManualClock();
    const model = createScriptedModel([{ text: "4" }]);
    const first = await start(model, { maxPingPongTurns: 0 }, undefined, clock.timers);
    const storeTurn = first.deps.startTurn;
    first.deps.startTurn = (turn, options) =>
      options?.dedupeKey?.endsWith(":announce")
        ? Promise.reject(new InboxWriteError(new Error("the database is away")))
        : storeTurn(turn, options);
    const runId = await send(first);
    await expect.poll(() => logged(first, "storing a turn's next write failed; retrying").length).toBe(1);
    await first.core.stop(5_000);
    expect(logged(first, "stored turn left for the next start")).toHaveLength(1);

    // Its next step was never stored, so the replay runs the turn again, then the announce once.
    const again = createScriptedModel([{ text: "4" }, { text: "2+2=4" }]);
    const second = await start(again, { maxPingPongTurns: 0 }, first.home);
    expect(second.core.inbox.pending()).toEqual([expect.objectContaining({ runId })]);
    expect(await second.core.pipeline.resume()).toBe(1);
    await expect.poll(() => logged(second, NO_ROUTE).length).toBe(1);
    await second.core.idle();
    expect(again.calls).toHaveLength(2);
  });
});
