import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/agents/run-registry.js";
import { createMemoryLogger } from "../../src/logger.js";
import type { AgentSessionsPool } from "../../src/sessions/agent-sessions.js";
import { type MemoryStateData, openMemoryState } from "../../src/state/memory-state.js";
import { createSubagentRegistry } from "../../src/tools/subagent-registry.js";

/** A registry on the stored tables `data`; no runtime: an announce it tries fails (and is logged). */
function registryOn(data: MemoryStateData) {
  const logger = createMemoryLogger();
  return createSubagentRegistry({
    state: openMemoryState({ data }),
    path: "subagents.json",
    sessions: {} as AgentSessionsPool,
    runtime: () => {
      throw new Error("no runtime in this test");
    },
    deliver: async () => {
      throw new Error("no delivery in this test");
    },
    handedOver: () => false,
    archiveAfterMinutes: 60,
    logger,
    now: () => 1_000,
  });
}

/** A spawned run whose end never comes (it is still running). */
const spawn = (runId: string) => ({
  runId,
  childSessionKey: `agent:worker:subagent:${runId}`,
  childAgentId: "worker",
  requesterKey: "agent:main:main",
  origin: { channel: "telegram", to: "42" },
  task: "research X",
  cleanup: "keep" as const,
});
const never = new Promise<RunRecord>(() => undefined);

describe("createSubagentRegistry", () => {
  it("recovers only the runs stored when it opened: one spawned since, still running, is not taken for an orphan", async () => {
    const data: MemoryStateData = new Map();
    const before = await registryOn(data);
    await before.register(spawn("left-behind"), never);
    await before.close();

    const registry = await registryOn(data);
    await registry.register(spawn("spawned-since"), never);
    registry.recover();
    await registry.recovered();
    expect(registry.get("left-behind")).toMatchObject({
      state: "ended",
      outcome: "error",
      error: "the gateway restarted while this sub-agent was running",
    });
    expect(registry.get("spawned-since")?.state).toBe("running");
    await registry.close();
  });
});
