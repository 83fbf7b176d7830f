import { describe, expect, it } from "vitest";
import { createAgentRuntime } from "../../../src/agents/agent-runtime.js";
import { createLanes } from "../../../src/agents/lanes.js";
import { createRunRegistry } from "../../../src/agents/run-registry.js";
import { parseConfig } from "../../../src/config/index.js";
import { createMemoryLogger } from "../../../src/logger.js";
import { parseSessionKey } from "../../../src/routing/index.js";
import { createAgentSessionsPool } from "../../../src/sessions/agent-sessions.js";
import { createManualClock } from "../../fakes/manual-clock.js";
import { type ScriptedStep, createScriptedModel } from "../../fakes/scripted-model.js";
import { onMemoryState } from "../../support/memory-state.js";
import { ADA, telegramDm } from "../../support/telegram-dm.js";

const KEY = "agent:main:telegram:dm:42";
const parsed = parseSessionKey(KEY)!;

const dm = (text: string, id: string) => telegramDm(text, { messageId: id, sender: ADA });

/** A runtime whose `collect` debounce waits on a manual clock; `bound` lists each tie of entries to a run. */
function setup(queue: Record<string, unknown>, steps: ScriptedStep[] = [{ text: "together" }, { text: "later" }]) {
  const clock = createManualClock();
  const { config } = parseConfig({ session: { queue } });
  const logger = createMemoryLogger();
  const runs = createRunRegistry({ now: clock.now });
  const model = createScriptedModel(steps);
  const sessions = createAgentSessionsPool(
    onMemoryState(
      { session: config.session, logger, storePathFor: () => `/mem/${Math.random()}/sessions.json` },
      `q-${Math.random()}`,
    ),
  );
  const runtime = createAgentRuntime({
    config,
    sessions,
    runs,
    lanes: createLanes(),
    logger,
    now: clock.now,
    queueTimers: clock.timers,
    resolveModel: (ref) => ({ model, ref, offline: false }),
    deliver: async () => ({ status: "delivered", messageIds: [] }),
  });
  const bound: Array<{ ids: string[]; runId: string }> = [];
  const offer = (text: string, n: number, owner = true) =>
    runtime.offer({
      entryId: `e${n}`,
      request: { runId: `run-${n}`, parsed, agentId: "main", message: dm(text, `m${n}`), owner },
      bind: async (ids, runId) => void bound.push({ ids, runId }),
    });
  /** lets pending promise callbacks (the lane's head, the offer) run */
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { clock, model, runtime, runs, bound, offer, settle };
}

describe("createSessionQueues, collect", () => {
  it("starts the collected turn once no message came for debounceMs, ties every message to its run first, and answers them in one turn", async () => {
    const t = setup({ mode: "collect", debounceMs: 500 });
    const first = await t.offer("a", 1);
    await t.settle();
    t.clock.advance(300);
    const second = await t.offer("b", 2);
    expect(second.runId).toBe(first.runId);
    t.clock.advance(300); // 600 ms after a, 300 after b: still waiting
    await t.settle();
    expect(t.model.calls).toHaveLength(0);
    expect(t.runtime.waiting(KEY)).toEqual({ messages: 2, turns: 1 });
    t.clock.advance(200);
    const [a, b] = await Promise.all([first.done, second.done]);
    expect(a).toMatchObject({ runId: "run-1", status: "ok", text: "together" });
    expect(b).toEqual(a);
    expect(t.bound).toEqual([{ ids: ["e1", "e2"], runId: "run-1" }]);
    expect(t.model.calls).toHaveLength(1);
    expect(t.runtime.waiting(KEY)).toEqual({ messages: 0, turns: 0 });
  });

  it("replays messages tied to a run as that run, whatever the mode, with no debounce and no new tie", async () => {
    const t = setup({ mode: "followup" });
    const request = (n: number, text: string) => ({
      runId: `run-${n}`,
      parsed,
      agentId: "main",
      message: dm(text, `m${n}`),
      owner: true,
    });
    const { runId, done } = await t.runtime.offer({
      entryId: "e1",
      request: request(1, "a"),
      bind: async () => expect.unreachable("a replay is tied already"),
      replay: { runId: "run-1", followers: [{ entryId: "e2", request: request(2, "b") }] },
    });
    expect(runId).toBe("run-1");
    expect(await done).toMatchObject({ status: "ok", text: "together" });
    expect(t.model.calls).toHaveLength(1);
  });
});

/** A model step that runs until its turn is aborted (an hour on the real clock; the abort ends it first). */
const hanging = (): ScriptedStep => ({ delayMs: 3_600_000, text: "never" });

describe("createSessionQueues, interrupt and /stop", () => {
  it("interrupt: neither a client's turn nor, by a guest's message, an owner's turn is stopped", async () => {
    const t = setup({ mode: "interrupt" }, [hanging(), hanging(), { text: "unused" }]);
    const client = t.runtime.enqueue({
      runId: "client-1",
      parsed,
      agentId: "main",
      prompt: "from a client",
      owner: true,
    });
    await t.settle();
    expect(t.runs.get("client-1")?.status).toBe("running");
    const owner = await t.offer("a", 1);
    await t.settle();
    expect(t.runs.get("client-1")?.status).toBe("running"); // a client's turn is not the queue's to stop
    t.runs.abort("client-1");
    expect((await client.done).status).toBe("aborted");
    await t.settle();
    expect(t.runs.get("run-1")?.status).toBe("running");
    const guest = await t.offer("guest says hi", 2, false);
    await t.settle();
    expect(t.runs.get("run-1")?.status).toBe("running"); // a guest does not stop the owner's turn
    expect(t.runtime.abortSession(KEY).cleared).toBe(1);
    expect((await owner.done).status).toBe("aborted");
    expect((await guest.done).status).toBe("aborted");
  });

  it("interrupt: the same sender's new message aborts the running turn and is answered by a new one", async () => {
    const t = setup({ mode: "interrupt" }, [hanging(), { text: "answer to b" }]);
    const a = await t.offer("a", 1);
    await t.settle();
    const b = await t.offer("b", 2);
    expect((await a.done).status).toBe("aborted");
    expect(await b.done).toMatchObject({ status: "ok", text: "answer to b" });
  });

  it("/stop in steer mode drops the message waiting to steer the running turn and counts it", async () => {
    const t = setup({ mode: "steer" }, [hanging(), { text: "must not run" }]);
    const first = await t.offer("a", 1);
    await t.settle();
    const second = await t.offer("b", 2);
    expect(second.runId).toBe("run-1"); // it waits to steer the running turn
    expect(t.runtime.abortSession(KEY).cleared).toBe(1);
    expect((await first.done).status).toBe("aborted");
    expect((await second.done).status).toBe("aborted");
    await t.settle();
    expect(t.model.calls).toHaveLength(1); // no turn was started for b after the stop
  });
});
