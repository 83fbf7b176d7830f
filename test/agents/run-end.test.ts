import { describe, expect, it } from "vitest";
import { RUN_ENDS, SUBAGENT_OUTCOME_OF, runEndOfSubagentOutcome } from "../../src/agents/run-end.js";
import { isFinalStatus } from "../../src/agents/run-registry.js";

describe("runEndOfSubagentOutcome", () => {
  it("reads every word the sub-agent registry stores back as the run end it was written from", () => {
    for (const end of RUN_ENDS) expect(runEndOfSubagentOutcome(SUBAGENT_OUTCOME_OF[end])).toBe(end);
  });

  it("keeps the stored words of state/subagents.json", () => {
    expect(SUBAGENT_OUTCOME_OF).toEqual({ ok: "success", error: "error", timeout: "timeout", aborted: "stopped" });
  });
});

describe("isFinalStatus", () => {
  it("is true for every run end and false while a run waits or runs", () => {
    expect(RUN_ENDS.every(isFinalStatus)).toBe(true);
    expect([isFinalStatus("queued"), isFinalStatus("running")]).toEqual([false, false]);
  });
});
