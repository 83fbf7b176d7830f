// A spawn and an announce as stored turns (docs/scale-out.md "The way there", step 5), on a real
// gateway core: where each is stored, under which key and run id, and what a replay of a spawn does
// when the child had or had not started before the restart.
import { describe, expect, it } from "vitest";
import type { StoredTurn } from "../../src/agents/stored-turn.js";
import { transcriptRef } from "../../src/sessions/agent-sessions.js";
import { storedRunId } from "../../src/agents/uuid-v5.js";
import { spawnTurnRunner } from "../../src/tools/spawn-turn.js";
import { createScriptedModel } from "../fakes/scripted-model.js";
import { type ToolHarness, useToolHarnesses } from "../support/tool-harness.js";

let h: ToolHarness;
const harness = useToolHarnesses();
const REQUESTER = "agent:main:main";

const settled = (runId: string) =>
  expect.poll(() => h.core.subagents.get(runId)?.state, { timeout: 5_000 }).toBe("announced");

/** The announces kept in the requester's transcript. */
async function announcesKept(): Promise<unknown[]> {
  const { store, transcripts } = await h.core.sessions.forAgent("main");
  const { messages } = await transcripts.readTail(transcriptRef(store.get(REQUESTER)!), { limit: 50 });
  return messages.filter((m) => m.announce === true);
}

/** A spawn as `sessions_spawn` stores it, for child `child` of the requester's main session. */
const spawnOf = (child: string): StoredTurn => ({
  source: "spawn",
  sessionKey: child,
  text: "do thing",
  owner: false,
  provenance: { kind: "session", sessionKey: REQUESTER, traceId: "t1", hop: 1 },
  input: {
    agentId: "main",
    requesterKey: REQUESTER,
    origin: { channel: "webchat", to: REQUESTER },
    cleanup: "keep",
    extraSystemPrompt: "# Subagent Context",
  },
});

describe("a spawn and its announce as stored turns", () => {
  it("stores the spawn in the child's inbox under spawn:<callId> (run id from the schema and that key), the announce in the requester's under announce:<runId>", async () => {
    h = await harness({ model: createScriptedModel([{ text: "found it" }, { text: "Result: found it" }]) });
    await h.seed({ key: REQUESTER });
    const caller = { ...h.caller(REQUESTER), callId: "run-1:0" };
    const result = await h.invoke("sessions_spawn", { task: "do thing" }, caller);
    expect(result.runId).toBe(storedRunId("spawn", "switchboard", "spawn:run-1:0"));
    expect(h.core.inbox.knows("spawn:run-1:0")).toBe(true);
    await settled(result.runId);
    await h.core.idle();
    expect(h.core.inbox.knows(`announce:${result.runId}`)).toBe(true);
    expect(h.core.inbox.pending()).toEqual([]);
    expect(await announcesKept()).toMatchObject([{ runId: `announce:${result.runId}` }]);
    expect(h.core.outbox.get(`announce:${result.runId}`)).toBeDefined();
  });

  it("runs a replayed spawn whose record was written but whose child never started, once", async () => {
    h = await harness({ model: createScriptedModel([{ text: "found it" }, { text: "Result: found it" }]) });
    await h.seed({ key: REQUESTER });
    const child = "agent:main:subagent:11111111-1111-4111-8111-111111111111";
    const input = spawnOf(child).input as { origin: { channel: string; to: string } };
    // What a gateway killed between the record's write and the child's start left behind.
    const never = new Promise<never>(() => undefined);
    const record = { childSessionKey: child, childAgentId: "main", requesterKey: REQUESTER, origin: input.origin };
    await h.core.subagents.register({ runId: "r1", ...record, task: "do thing", cleanup: "keep", queued: true }, never);

    await spawnTurnRunner(h.deps).run(spawnOf(child), { runId: "r1", resumed: true });
    expect(h.core.runs.get("r1")).toMatchObject({ status: "ok", text: "found it" });
    expect(h.core.subagents.get("r1")).toMatchObject({ state: "announced", outcome: "success" });
    expect(h.core.subagents.get("r1")?.queued).toBeUndefined();
    expect(await h.entry(child)).toMatchObject({ spawnedBy: REQUESTER, channel: "internal" });
    await h.core.idle();
    expect(await announcesKept()).toHaveLength(1);
  });

  it("does not run a replayed spawn whose stop was asked before the restart, though its child never started", async () => {
    h = await harness({ model: createScriptedModel([]) });
    const child = "agent:main:subagent:33333333-3333-4333-8333-333333333333";
    const never = new Promise<never>(() => undefined);
    const origin = { channel: "webchat", to: REQUESTER };
    const record = { childSessionKey: child, childAgentId: "main", requesterKey: REQUESTER, origin };
    const stopped = { runId: "r3", ...record, task: "do thing", cleanup: "keep" as const, queued: true as const };
    await h.core.subagents.register({ ...stopped, stopAskedAt: 5 }, never);

    await spawnTurnRunner(h.deps).run(spawnOf(child), { runId: "r3", resumed: true });
    expect(h.core.runs.get("r3")).toBeUndefined();
    expect(await h.entry(child)).toBeUndefined();
  });

  it("writes the stop on the record before it aborts the child (what a restart reads)", async () => {
    h = await harness({ model: createScriptedModel([{ text: "late", delayMs: 60_000 }]) });
    await h.seed({ key: REQUESTER });
    const result = await h.invoke("sessions_spawn", { task: "do thing" }, { ...h.caller(REQUESTER), callId: "c1" });
    await expect.poll(() => h.core.runs.get(result.runId)?.status).toBe("running");
    expect(await h.core.subagents.stop(REQUESTER)).toBe(1);
    expect(h.core.subagents.get(result.runId)?.stopAskedAt).toEqual(expect.any(Number));
    await expect.poll(() => h.core.subagents.get(result.runId)?.outcome).toBe("stopped");
  });

  it("does not run a replayed spawn whose child had started before the restart (the recovery announces it as interrupted)", async () => {
    h = await harness({ model: createScriptedModel([]) });
    const child = "agent:main:subagent:22222222-2222-4222-8222-222222222222";
    const never = new Promise<never>(() => undefined);
    const origin = { channel: "webchat", to: REQUESTER };
    const record = { childSessionKey: child, childAgentId: "main", requesterKey: REQUESTER, origin };
    await h.core.subagents.register({ runId: "r2", ...record, task: "do thing", cleanup: "keep" }, never);

    await spawnTurnRunner(h.deps).run(spawnOf(child), { runId: "r2", resumed: true });
    expect(h.core.runs.get("r2")).toBeUndefined();
    expect(await h.entry(child)).toBeUndefined();
  });
});

describe("a spawn whose child record cannot be written", () => {
  it("answers the failure, not accepted, and leaves the spawn pending for the next start", async () => {
    h = await harness({ model: createScriptedModel([{ text: "found it" }, { text: "Result: found it" }]) });
    await h.seed({ key: REQUESTER });
    const registry = h.deps.subagents;
    const register = registry.register;
    let failures = 1;
    registry.register = (...args) =>
      failures-- > 0 ? Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:5432")) : register(...args);

    const result = await h.invoke("sessions_spawn", { task: "do thing" }, { ...h.caller(REQUESTER), callId: "c9:0" });
    expect(result).toMatchObject({ status: "error", error: expect.stringContaining("ECONNREFUSED") });
    const left = () => h.logger.records.filter((r) => r.message === "stored turn left for the next start");
    await expect.poll(left).toHaveLength(1);
    expect(result.runId).toBe(storedRunId("spawn", "switchboard", "spawn:c9:0"));
    expect(h.core.subagents.get(result.runId)).toBeUndefined();
    expect(h.core.inbox.pending()).toMatchObject([{ runId: result.runId }]);
    await expect.poll(() => h.core.runs.get(result.runId)?.status).toBe("error");
  });
});
