import { describe, expect, it } from "vitest";
import type { SubagentInfo } from "../../../src/commands/command-deps.js";
import { STRINGS } from "../../../src/commands/command-strings.js";
import { createCommandHarness, dm } from "../command-harness.js";

const KEY = "agent:main:telegram:dm:42";
const NOW = 1_700_000_000_000;
const infos = (): SubagentInfo[] => [
  {
    runId: "a1b2c3d4-run",
    childSessionKey: "agent:main:subagent:a",
    label: "research",
    task: "look it up",
    status: "running",
    startedAt: NOW - 90_000,
  },
  {
    runId: "e5f6a7b8-run",
    childSessionKey: "agent:main:subagent:b",
    task: "draft the   reply to Bea",
    status: "running",
    startedAt: NOW - 30_000,
  },
  {
    runId: "c9d0e1f2-run",
    childSessionKey: "agent:main:subagent:c",
    task: "sum",
    status: "timeout",
    startedAt: NOW - 3_600_000,
    endedAt: NOW - 600_000,
  },
];

describe("subagentsCommand", () => {
  it("lists the session's sub-agents with state and age", async () => {
    const h = await createCommandHarness({ subagents: infos() });
    expect((await h.dispatch(dm("42", "/subagents")))?.reply).toBe(
      [
        STRINGS.subagentsTitle(2, 3),
        "1. research (running 1m) run a1b2c3d4-run",
        "2. draft the reply to Bea (running 30s) run e5f6a7b8-run",
        "3. sum (timeout 10m ago) run c9d0e1f2-run",
      ].join("\n"),
    );
  });

  it("says so when there are none", async () => {
    const h = await createCommandHarness();
    expect(await h.dispatch(dm("42", "/subagents list"))).toEqual({ reply: STRINGS.noSubagents });
  });

  it.each([
    ["2", "e5f6a7b8-run"],
    ["Research", "a1b2c3d4-run"],
    ["e5f6", "e5f6a7b8-run"],
  ])("stops the one that %s names", async (target, runId) => {
    const h = await createCommandHarness({ subagents: infos() });
    expect(await h.dispatch(dm("42", `/subagents stop ${target}`))).toEqual({ reply: STRINGS.stoppedSubagents(1) });
    expect(h.subagents.stops).toEqual([{ requesterKey: KEY, runId }]);
  });

  it("stops all running ones", async () => {
    const h = await createCommandHarness({ subagents: infos() });
    expect(await h.dispatch(dm("42", "/subagents stop all"))).toEqual({ reply: STRINGS.stoppedSubagents(2) });
  });

  it("stops nothing for a target that names no running sub-agent", async () => {
    const h = await createCommandHarness({ subagents: infos() });
    expect(await h.dispatch(dm("42", "/subagents stop 3"))).toEqual({ reply: STRINGS.noSubagentMatch("3") });
    expect(await h.dispatch(dm("42", "/subagents stop zzz"))).toEqual({ reply: STRINGS.noSubagentMatch("zzz") });
    expect(h.subagents.stops).toEqual([]);
  });
});
