import { describe, expect, it } from "vitest";
import type { SubagentInfo } from "../../../src/commands/command-deps.js";
import { STRINGS } from "../../../src/commands/command-strings.js";
import { createCommandHarness, dm } from "../command-harness.js";

const KEY = "agent:main:telegram:dm:42";
const child = (n: number, status: SubagentInfo["status"] = "running"): SubagentInfo => ({
  runId: `run-${n}`,
  childSessionKey: `agent:main:subagent:c${n}`,
  task: `task ${n}`,
  status,
  startedAt: 1_000,
});

async function busySession(h: Awaited<ReturnType<typeof createCommandHarness>>) {
  await h.seed(KEY);
  const parsed = h.context(dm("42", "x")).sessionKey;
  const running = h.runtime.enqueue({ parsed, agentId: "main", prompt: "long task", deliver: false });
  const queued = h.runtime.enqueue({ parsed, agentId: "main", prompt: "follow-up", deliver: false });
  await expect.poll(() => h.model.calls.length).toBe(1);
  return { running, queued };
}

describe("stopCommand", () => {
  it("aborts the running turn, drops the queued one, says so and marks the entry", async () => {
    const h = await createCommandHarness({ steps: [{ text: "never", delayMs: 5_000 }] });
    const { running, queued } = await busySession(h);
    expect(await h.dispatch(dm("42", "/stop"))).toEqual({ reply: `${STRINGS.aborted} ${STRINGS.droppedQueued(1)}` });
    expect(await running.done).toMatchObject({ status: "aborted" });
    expect(await queued.done).toMatchObject({ status: "aborted" });
    expect(h.lanes.queued(KEY)).toBe(0);
    expect(h.store.get(KEY)?.abortedLastRun).toBe(true);
    expect(h.model.calls).toHaveLength(1);
  });

  it("stops the session's sub-agents and counts them", async () => {
    const h = await createCommandHarness({ subagents: [child(1), child(2), child(3, "ok")] });
    expect(await h.dispatch(dm("42", "/stop"))).toEqual({ reply: `${STRINGS.aborted} ${STRINGS.stoppedSubagents(2)}` });
    expect(h.subagents.stops).toEqual([{ requesterKey: KEY }]);
  });

  it("no emoji: counts stopped sub-agents and dropped messages in words", () => {
    expect([
      STRINGS.aborted,
      STRINGS.stoppedSubagents(1),
      STRINGS.stoppedSubagents(3),
      STRINGS.droppedQueued(1),
      STRINGS.droppedQueued(2),
    ]).toEqual([
      "Agent was aborted.",
      "Stopped 1 sub-agent.",
      "Stopped 3 sub-agents.",
      "Dropped 1 queued message.",
      "Dropped 2 queued messages.",
    ]);
  });

  it("aborts on a bare abort word while a turn runs", async () => {
    const h = await createCommandHarness({ steps: [{ text: "never", delayMs: 5_000 }] });
    const { running } = await busySession(h);
    expect(await h.dispatch(dm("42", "Abort"))).toEqual({ reply: `${STRINGS.aborted} ${STRINGS.droppedQueued(1)}` });
    expect(await running.done).toMatchObject({ status: "aborted" });
  });

  it("leaves a bare abort word to the model when nothing runs, or when abort words are off", async () => {
    const h = await createCommandHarness();
    expect(await h.dispatch(dm("42", "stop"))).toBeNull();
    const off = await createCommandHarness({ config: { commands: { bareAbortWords: false } }, subagents: [child(1)] });
    expect(await off.dispatch(dm("42", "stop"))).toBeNull();
    expect(off.subagents.stops).toEqual([]);
  });
});
