import { routeOf } from "../../agents/agent-runtime.js";
import { buildSystemPrompt } from "../../agents/system-prompt.js";
import type { CommandScope } from "../command-deps.js";
import { defineCommand } from "../command-definition.js";
import { formatTokens } from "../command-format.js";
import { STRINGS } from "../command-strings.js";
import { isCompactionMarker } from "../../agents/compaction-marker.js";
import { type ContextSize, contextSize, estimateTokens, messageText } from "../context-size.js";
import { readModelContext, sessionModel } from "../session-context.js";

/** What the model of a session sees (spec §5.7), as `/context json` returns it. */
export interface ContextReport {
  sessionKey: string;
  model: string;
  systemPrompt: { parts: Array<{ text: string; tokens: number }>; tokens: number };
  /** the compaction summary the system prompt carries, if any */
  summary?: { tokens: number };
  tools: Array<{ name: string; description?: string }>;
  history: ContextSize;
}

/** Builds the report for the context's session. */
export async function contextReport(scope: CommandScope): Promise<ContextReport> {
  const { context, deps } = scope;
  const entry = scope.sessions.store.get(context.sessionKey.key);
  const { ref } = sessionModel(scope, entry);
  const system = buildSystemPrompt({ config: deps.config, agentId: context.agentId, sessionKey: context.sessionKey.key, modelRef: ref });
  const parts = system.split("\n").map((text) => ({ text, tokens: estimateTokens(text) }));
  const messages = await readModelContext(scope, entry);
  const marker = messages.find(isCompactionMarker);
  const origin = routeOf(context.message);
  const toolSet = deps.tools?.({ agentId: context.agentId, sessionKey: context.sessionKey, runId: "context", ...(origin && { origin }) }) ?? {};
  return {
    sessionKey: context.sessionKey.key,
    model: ref,
    systemPrompt: { parts, tokens: estimateTokens(system) },
    ...(marker && { summary: { tokens: estimateTokens(messageText(marker)) } }),
    tools: Object.entries(toolSet).map(([name, tool]) => ({ name, ...(tool.description && { description: tool.description }) })),
    history: contextSize(messages.filter((m) => !isCompactionMarker(m))),
  };
}

function formatReport(report: ContextReport, detailed: boolean): string {
  const roles = Object.entries(report.history.byRole).map(([role, n]) => `${n} ${role}`).join(", ");
  const lines = [
    `${STRINGS.contextTitle(detailed)} for ${report.sessionKey} (model ${report.model})`,
    `System prompt: ${report.systemPrompt.parts.length} parts, ~${formatTokens(report.systemPrompt.tokens)} tokens`,
    ...(detailed ? report.systemPrompt.parts.map((p) => `  - ${p.text} (~${p.tokens})`) : []),
    ...(report.summary ? [`Compaction summary (in the system prompt): ~${formatTokens(report.summary.tokens)} tokens`] : []),
    `Tools (${report.tools.length}): ${report.tools.map((t) => t.name).join(", ") || "none"}`,
    ...(detailed ? report.tools.map((t) => `  - ${t.name}: ${t.description ?? ""}`) : []),
    `History: ${report.history.messages} messages, ~${formatTokens(report.history.tokens)} tokens${roles ? ` (${roles})` : ""}`,
  ];
  return lines.join("\n");
}

/** `/context [list|detail|json]`: the system prompt parts, tools and history size the model sees. */
export const contextCommand = defineCommand({
  name: "context",
  usage: "/context [list|detail|json]",
  summary: "Shows what the model sees here: system prompt parts, tools, history size (estimated tokens).",
  access: "commands",
  async run(command, scope) {
    if (command.mode === "help") return { reply: STRINGS.contextHelp };
    const report = await contextReport(scope);
    return { reply: command.mode === "json" ? JSON.stringify(report, null, 2) : formatReport(report, command.mode === "detail") };
  },
});
