import { describe, expect, it } from "vitest";
import { subagentControlOf } from "../../src/commands/registry-subagents.js";
import type { SubagentRecord } from "../../src/tools/subagent-registry.js";

const record = (runId: string, fields: Partial<SubagentRecord>): SubagentRecord => ({
  runId,
  childSessionKey: `agent:main:subagent:${runId}`,
  childAgentId: "main",
  requesterKey: "agent:main:main",
  origin: { channel: "webchat" },
  task: `task ${runId}`,
  cleanup: "keep",
  state: "running",
  createdAt: 100,
  ...fields,
});

describe("subagentControlOf", () => {
  it("shows registry records as running or by how they ended, and passes stops through", async () => {
    const stops: unknown[] = [];
    const registry = {
      list: () => [
        record("a", { label: "research", startedAt: 150 }),
        record("b", { state: "announced", outcome: "success", endedAt: 300 }),
        record("c", { state: "ended", outcome: "stopped", endedAt: 200 }),
      ],
      stop: async (key: string, runId?: string) => {
        stops.push([key, runId]);
        return 2;
      },
    };
    const control = subagentControlOf(registry);
    expect(control.list("agent:main:main")).toEqual([
      {
        runId: "a",
        childSessionKey: "agent:main:subagent:a",
        label: "research",
        task: "task a",
        status: "running",
        startedAt: 150,
      },
      {
        runId: "b",
        childSessionKey: "agent:main:subagent:b",
        task: "task b",
        status: "ok",
        startedAt: 100,
        endedAt: 300,
      },
      {
        runId: "c",
        childSessionKey: "agent:main:subagent:c",
        task: "task c",
        status: "aborted",
        startedAt: 100,
        endedAt: 200,
      },
    ]);
    expect(await control.stop("agent:main:main", "a")).toBe(2);
    expect(stops).toEqual([["agent:main:main", "a"]]);
  });
});
