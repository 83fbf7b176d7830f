import type { LanguageModelV3Message } from "./language-model-v3.js";

type ToolMessage = Extract<LanguageModelV3Message, { role: "tool" }>;
type ToolResultPart = Extract<ToolMessage["content"][number], { type: "tool-result" }>;

/** Longest JSON a summary quotes before cutting it. */
const SUMMARY_JSON_LIMIT = 1_000;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function compactJson(value: unknown): string {
  const json = typeof value === "string" ? value : (JSON.stringify(value) ?? "null");
  return json.length > SUMMARY_JSON_LIMIT ? `${json.slice(0, SUMMARY_JSON_LIMIT)}…` : json;
}

function listRows(title: string, rows: unknown[], label: (row: Record<string, unknown>) => string): string {
  const lines = rows.filter(isRecord).map((row) => `- ${label(row)}`);
  return lines.length === 0 ? `${title} (0): none.` : `${title} (${lines.length}):\n${lines.join("\n")}`;
}

function summarizeValue(toolName: string, value: unknown): string {
  if (toolName === "sessions_list" && isRecord(value) && Array.isArray(value.sessions)) {
    return listRows("Sessions", value.sessions, (row) => `${String(row.key)} (${String(row.kind ?? "unknown")})`);
  }
  if (toolName === "agents_list" && isRecord(value) && Array.isArray(value.agents)) {
    return listRows("Agents", value.agents, (row) =>
      row.name ? `${String(row.id)} (${String(row.name)})` : String(row.id),
    );
  }
  return `${toolName}: ${compactJson(value)}`;
}

function summarizePart(part: ToolResultPart): string {
  const output = part.output;
  switch (output.type) {
    case "text":
    case "json":
      return summarizeValue(part.toolName, output.value);
    case "error-text":
    case "error-json":
      return `${part.toolName} failed: ${compactJson(output.value)}`;
    case "execution-denied":
      return `${part.toolName} was denied${output.reason ? `: ${output.reason}` : "."}`;
    case "content":
      return `${part.toolName}: ${compactJson(output.value.map((item) => (item.type === "text" ? item.text : `[${item.type}]`)).join("\n"))}`;
  }
}

/** A short readable text for the tool results of a tool message (the offline model's second step). */
export function summarizeToolResults(message: ToolMessage): string {
  const parts = message.content.filter((part): part is ToolResultPart => part.type === "tool-result");
  return parts.length === 0 ? "Done." : parts.map(summarizePart).join("\n\n");
}
