import type { SubagentRecord, SubagentRegistry } from "../tools/subagent-registry.js";
import { runEndOfSubagentOutcome } from "../agents/run-end.js";
import type { SubagentControl, SubagentInfo } from "./command-deps.js";

function infoOf(record: SubagentRecord): SubagentInfo {
  return {
    runId: record.runId,
    childSessionKey: record.childSessionKey,
    ...(record.label && { label: record.label }),
    task: record.task,
    status: record.state === "running" ? "running" : runEndOfSubagentOutcome(record.outcome ?? "error"),
    startedAt: record.startedAt ?? record.createdAt,
    ...(record.endedAt !== undefined && { endedAt: record.endedAt }),
  };
}

/** The sub-agent registry of the tools layer as the commands see it (until the tools layer exports its own). */
export function subagentControlOf(registry: Pick<SubagentRegistry, "list" | "stop">): SubagentControl {
  return {
    list: (requesterKey) => registry.list(requesterKey).map(infoOf),
    stop: (requesterKey, runId) => registry.stop(requesterKey, runId),
  };
}
