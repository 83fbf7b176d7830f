import type { SubagentRecord, SubagentRegistry } from "../tools/subagent-registry.js";
import type { SubagentControl, SubagentInfo, SubagentStatus } from "./command-deps.js";

const STATUS_OF: Readonly<Record<string, SubagentStatus>> = {
  success: "ok",
  error: "error",
  timeout: "timeout",
  stopped: "stopped",
};

function infoOf(record: SubagentRecord): SubagentInfo {
  return {
    runId: record.runId,
    childSessionKey: record.childSessionKey,
    ...(record.label && { label: record.label }),
    task: record.task,
    status: record.state === "running" ? "running" : (STATUS_OF[record.outcome ?? "error"] ?? "error"),
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
