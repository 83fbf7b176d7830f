// A stop of a sub-agent's run as a stored turn (docs/scale-out.md "The way there", step 5), on a real
// gateway core: `/stop` stores an `abort` turn in the child's inbox under `abort:<runId>`, and its
// runner (the child's owner) aborts the run; a replayed abort of a run that ended does nothing.
import { describe, expect, it } from "vitest";
import { type AbortTurnDeps, abortTurnRunner } from "../../src/tools/abort-turn.js";
import type { StoredTurn } from "../../src/agents/stored-turn.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { type ToolHarness, useToolHarnesses } from "../support/tool-harness.js";

let h: ToolHarness;
const harness = useToolHarnesses();
const REQUESTER = "agent:main:main";

/** A stored abort of run `runId` in child session `child`, as `/stop` stores it. */
const abortOf = (child: string, runId: string): StoredTurn => ({
  source: "abort",
  sessionKey: child,
  text: `Stop sub-agent run ${runId}`,
  owner: false,
  provenance: { kind: "system" },
  input: { runId },
});

/** A sub-agent spawned by the requester whose task runs for a minute; resolves once its run is running. */
async function spawnLongChild(callId: string): Promise<{ runId: string; childSessionKey: string }> {
  const result = await h.invoke("sessions_spawn", { task: "do thing" }, { ...h.caller(REQUESTER), callId });
  await expect.poll(() => h.core.runs.get(result.runId)?.status).toBe("running");
  return { runId: result.runId, childSessionKey: result.childSessionKey };
}

/** The runtime's `abortSession` calls, recorded (the run registry of the harness is not touched). */
function recordingRuntime(): AbortTurnDeps["runtime"] & { aborted: string[] } {
  const aborted: string[] = [];
  const abortSession = (key: string) => {
    aborted.push(key);
    return { runIds: [], cleared: 0 };
  };
  return { aborted, abortSession };
}

describe("a sub-agent's stop as an abort turn in the child's inbox", () => {
  it("stores the stop under abort:<runId> after writing it on the record; its runner aborts the child", async () => {
    const model = createScriptedModel([{ text: "late", delayMs: 60_000 }]);
    h = await harness({ model });
    await h.seed({ key: REQUESTER });
    const child = await spawnLongChild("c1");
    // The child's model call, under way: the only one (the requester runs no turn).
    await expect.poll(() => model.calls.length).toBe(1);

    expect(await h.core.subagents.stop(REQUESTER)).toBe(1);
    expect(h.core.inbox.knows(`abort:${child.runId}`)).toBe(true);
    // On the gateway that stored it, the runner ran before the store settled: /stop answers after
    // the abort, which the child's model call has been signalled by then.
    expect(model.calls[0]!.abortSignal?.aborted).toBe(true);
    await expect.poll(() => h.core.runs.get(child.runId)?.status).toBe("aborted");
    await expect.poll(() => h.core.subagents.get(child.runId)?.outcome).toBe("stopped");
    expect(h.core.subagents.get(child.runId)?.stopAskedAt).toEqual(expect.any(Number));
    await h.core.idle();
    expect(h.core.inbox.pending()).toEqual([]);
  });

  it("aborts the child's run when the abort is run alone (a replay finds it stored), the requester's side doing nothing", async () => {
    h = await harness({ model: createScriptedModel([{ text: "late", delayMs: 60_000 }]) });
    await h.seed({ key: REQUESTER });
    const child = await spawnLongChild("c2");

    await abortTurnRunner(h.deps).run(abortOf(child.childSessionKey, child.runId), { runId: "a1", resumed: true });
    await expect.poll(() => h.core.runs.get(child.runId)?.status).toBe("aborted");
    await expect.poll(() => h.core.subagents.get(child.runId)?.outcome).toBe("stopped");
  });

  it("does nothing for a run that already ended, nor for one it does not know", async () => {
    h = await harness({ model: createScriptedModel([{ text: "found it" }, { text: "Result: found it" }]) });
    await h.seed({ key: REQUESTER });
    const result = await h.invoke("sessions_spawn", { task: "do thing" }, { ...h.caller(REQUESTER), callId: "c3" });
    await expect.poll(() => h.core.subagents.get(result.runId)?.state, { timeout: 5_000 }).toBe("announced");
    const runtime = recordingRuntime();
    const runner = abortTurnRunner({ subagents: h.core.subagents, runtime });

    await runner.run(abortOf(result.childSessionKey, result.runId), { runId: "a2", resumed: true });
    await runner.run(abortOf(result.childSessionKey, "no-such-run"), { runId: "a3", resumed: true });
    expect(runtime.aborted).toEqual([]);
    expect(h.core.subagents.get(result.runId)).toMatchObject({ state: "announced", outcome: "success" });
  });
});
