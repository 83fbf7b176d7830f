import { routeOf } from "../../agents/agent-runtime.js";
import { isCompactionMarker } from "../../agents/compaction-marker.js";
import { contextWindowOf } from "../../agents/models/context-window.js";
import { turnPromptParts } from "../../agents/turn-prompt.js";
import type { CommandScope } from "../command-deps.js";
import { defineCommand } from "../command-definition.js";
import { formatTokens } from "../command-format.js";
import { STRINGS } from "../command-strings.js";
import { type ContextSize, contextSize, estimateTokens, messageText } from "../context-size.js";
import { readModelContext, sessionModel } from "../session-context.js";

/** One part of the system prompt as `/context` reports it; `cut` for a workspace file the prompt truncated. */
interface ContextPart {
  kind: string;
  title: string;
  text: string;
  tokens: number;
  cut?: { keptChars: number; fileChars: number };
}

/** What the model of a session sees, as `/context json` returns it. */
export interface ContextReport {
  sessionKey: string;
  model: string;
  /** the model's context window in tokens */
  window: number;
  /** `tokens` is the sum of the parts' tokens */
  systemPrompt: { parts: ContextPart[]; tokens: number };
  /** the compaction summary the context starts from, if any */
  summary?: { tokens: number };
  tools: Array<{ name: string; description?: string }>;
  history: ContextSize;
  /** system prompt + summary + history */
  totalTokens: number;
}

/** The tools a turn of this sender would get on the context's session (a guest gets fewer). */
async function toolsOf(scope: CommandScope) {
  const { context, deps } = scope;
  const origin = routeOf(context.message);
  return (
    (await deps.tools?.({
      agentId: context.agentId,
      sessionKey: context.sessionKey,
      runId: "context",
      owner: context.sender.owner,
      ...(origin && { origin }),
    })) ?? {}
  );
}

/** The system prompt's parts as a turn on `ref` would build them, each with its size. */
async function systemParts(scope: CommandScope, ref: string, toolNames: string[]): Promise<ContextPart[]> {
  const { context, deps } = scope;
  const promptParts = await turnPromptParts({
    config: deps.config,
    agentId: context.agentId,
    sessionKey: context.sessionKey.key,
    modelRef: ref,
    message: context.message,
    workspace: deps.workspaceOf?.(context.agentId),
    toolNames,
  });
  const keptChars = deps.config.agents.defaults.workspace.promptFileMaxChars;
  return promptParts.map(
    (part): ContextPart => ({
      kind: part.kind,
      title: part.title,
      text: part.text,
      tokens: estimateTokens(part.text),
      ...(part.file?.truncated && { cut: { keptChars, fileChars: part.file.originalChars } }),
    }),
  );
}

/** Builds the report for the context's session. */
async function contextReport(scope: CommandScope): Promise<ContextReport> {
  const { context, deps } = scope;
  const entry = scope.sessions.store.get(context.sessionKey.key);
  const { ref } = sessionModel(scope, entry);
  const toolSet = await toolsOf(scope);
  const parts = await systemParts(scope, ref, Object.keys(toolSet));
  const messages = await readModelContext(scope.sessions, entry);
  const marker = messages.find(isCompactionMarker);
  const summary = marker ? { tokens: estimateTokens(messageText(marker)) } : undefined;
  const history = contextSize(messages.filter((m) => !isCompactionMarker(m)));
  const system = parts.reduce((sum, part) => sum + part.tokens, 0);
  return {
    sessionKey: context.sessionKey.key,
    model: ref,
    window: contextWindowOf(deps.config, ref),
    systemPrompt: { parts, tokens: system },
    ...(summary && { summary }),
    tools: Object.entries(toolSet).map(([name, tool]) => ({
      name,
      ...(tool.description && { description: tool.description }),
    })),
    history,
    totalTokens: system + (summary?.tokens ?? 0) + history.tokens,
  };
}

function partLine(part: ContextPart): string {
  const cut = part.cut ? ` (cut: ${part.cut.keptChars} of ${part.cut.fileChars} characters)` : "";
  return `  - ${part.title}: ~${formatTokens(part.tokens)}${cut}`;
}

function biggest(report: ContextReport): string {
  const items = [
    ...report.systemPrompt.parts.map((p) => ({ name: p.title, tokens: p.tokens })),
    { name: "history", tokens: report.history.tokens },
  ];
  if (report.summary) items.push({ name: "summary", tokens: report.summary.tokens });
  return items
    .sort((a, b) => b.tokens - a.tokens)
    .slice(0, 3)
    .map((i) => `${i.name} ~${formatTokens(i.tokens)}`)
    .join(", ");
}

function formatReport(report: ContextReport, detailed: boolean): string {
  const roles = Object.entries(report.history.byRole)
    .map(([role, n]) => `${n} ${role}`)
    .join(", ");
  const cut = report.systemPrompt.parts.filter((p) => p.cut).map((p) => p.title);
  const lines = [
    `${STRINGS.contextTitle(detailed)} for ${report.sessionKey} (model ${report.model})`,
    `System prompt: ${report.systemPrompt.parts.length} parts, ~${formatTokens(report.systemPrompt.tokens)} tokens`,
    ...report.systemPrompt.parts.flatMap((p) => [
      partLine(p),
      ...(detailed ? p.text.split("\n").map((line) => `      ${line}`) : []),
    ]),
    ...(cut.length ? [`Cut to fit: ${cut.join(", ")}`] : []),
    ...(report.summary ? [`Compaction summary: ~${formatTokens(report.summary.tokens)} tokens`] : []),
    `History: ${report.history.messages} messages, ~${formatTokens(report.history.tokens)} tokens${roles ? ` (${roles})` : ""}`,
    `Total: ~${formatTokens(report.totalTokens)} of ${formatTokens(report.window)} tokens · biggest: ${biggest(report)}`,
    `Tools (${report.tools.length}): ${report.tools.map((t) => t.name).join(", ") || "none"}`,
    ...(detailed ? report.tools.map((t) => `  - ${t.name}: ${t.description ?? ""}`) : []),
  ];
  return lines.join("\n");
}

/** `/context [list|detail|json]`: the system prompt parts (workspace files included), tools and history size the model sees. */
export const contextCommand = defineCommand({
  name: "context",
  usage: "/context [list|detail|json]",
  summary:
    "Shows what the model sees here: each system prompt part (workspace files included, cut ones marked) with its size, the biggest contributors, tools, history (estimated tokens).",
  access: "commands",
  async run(command, scope) {
    if (command.mode === "help") return { reply: STRINGS.contextHelp };
    const report = await contextReport(scope);
    return {
      reply:
        command.mode === "json" ? JSON.stringify(report, null, 2) : formatReport(report, command.mode === "detail"),
    };
  },
});
