import type { SubagentInfo } from "../command-deps.js";
import { defineCommand } from "../command-definition.js";
import { formatAge, formatRunEnd, formatSpan } from "../command-format.js";
import { STRINGS } from "../command-strings.js";

const TASK_CHARS = 60;

function describe(info: SubagentInfo, index: number, now: number): string {
  const name = info.label ?? info.task.replace(/\s+/g, " ").slice(0, TASK_CHARS);
  const when =
    info.status === "running"
      ? `running ${formatSpan(now - info.startedAt)}`
      : `${formatRunEnd(info.status)} ${formatAge(info.endedAt ?? info.startedAt, now)}`;
  return `${index + 1}. ${name} (${when}) run ${info.runId}`;
}

/** The running sub-agent `target` names: its position in the list, its label, or its run id (or the start of it). */
function findRunning(list: readonly SubagentInfo[], target: string): SubagentInfo | undefined {
  const lower = target.toLowerCase();
  const byPosition = /^\d+$/.test(target) ? list[Number(target) - 1] : undefined;
  const match =
    byPosition ??
    list.find((s) => s.label?.toLowerCase() === lower) ??
    list.find((s) => s.runId.toLowerCase().startsWith(lower));
  return match?.status === "running" ? match : undefined;
}

/** `/subagents [list|stop <id>|stop all]`: the sub-agents this session spawned; stop one or all. */
export const subagentsCommand = defineCommand({
  name: "subagents",
  usage: "/subagents [list|stop <n|label|runId>|stop all]",
  summary:
    "Lists the sub-agents this session spawned with their state and age; stops one (by position, label or run id) or all.",
  access: "commands",
  async run(command, { context, deps, now }) {
    const key = context.sessionKey.key;
    const list = deps.subagents?.list(key) ?? [];
    if (command.action === "list") {
      if (list.length === 0) return { reply: STRINGS.noSubagents };
      const running = list.filter((s) => s.status === "running").length;
      return {
        reply: [STRINGS.subagentsTitle(running, list.length), ...list.map((s, i) => describe(s, i, now()))].join("\n"),
      };
    }
    if (command.target === "all") return { reply: STRINGS.stoppedSubagents((await deps.subagents?.stop(key)) ?? 0) };
    const target = findRunning(list, command.target);
    if (!target || !deps.subagents) return { reply: STRINGS.noSubagentMatch(command.target) };
    return { reply: STRINGS.stoppedSubagents(await deps.subagents.stop(key, target.runId)) };
  },
});
