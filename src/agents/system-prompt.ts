import type { Config } from "../config/schema/index.js";
import type { PromptFile } from "./workspace/prompt-files.js";

/** Who is speaking and where, as the prompt states it. */
export interface SessionFacts {
  channel?: string;
  chatType?: "direct" | "group" | "channel";
  /** the sender's name or id, stated in groups */
  speaker?: string;
}

/** What the system prompt is built from; the runtime and `/context` pass the same input. */
export interface SystemPromptInput {
  config: Config;
  agentId: string;
  sessionKey: string;
  modelRef: string;
  facts?: SessionFacts;
  /** the workspace files, already capped ({@link readPromptFiles}) */
  files?: readonly PromptFile[];
  /** the tools this run gets, by name */
  toolNames?: readonly string[];
  extra?: string | undefined;
}

/** One titled part of the system prompt; `file` parts say whether the file was cut. */
export interface PromptPart {
  kind: "identity" | "session" | "file" | "tools" | "extra";
  title: string;
  text: string;
  file?: { name: string; originalChars: number; truncated: boolean };
}

const FILE_TOOLS = ["read", "write", "append", "edit", "list"];

function sessionPart(input: SystemPromptInput): string {
  const { facts } = input;
  const lines = [`Session: ${input.sessionKey}.`];
  if (facts?.channel)
    lines.push(
      `Channel: ${facts.channel}${facts.chatType ? `, a ${facts.chatType === "direct" ? "direct chat" : facts.chatType}` : ""}.`,
    );
  if (facts?.speaker && facts.chatType !== "direct") lines.push(`Speaking now: ${facts.speaker}.`);
  return lines.join("\n");
}

function toolsPart(names: readonly string[]): string | undefined {
  if (names.length === 0) return undefined;
  const lines = [`Tools: ${names.join(", ")}.`];
  if (FILE_TOOLS.some((name) => names.includes(name)))
    lines.push('File tools work inside your workspace only; paths are relative to it (e.g. "memory/2026-01-31.md").');
  if (names.some((name) => name.includes("__"))) lines.push("Tools named <server>__<tool> come from MCP servers.");
  return lines.join("\n");
}

/**
 * The parts of a turn's system prompt, in order: identity, session facts, each workspace file
 * (capped, the cut marked), tool notes, then any extra text.
 */
export function buildPromptParts(input: SystemPromptInput): PromptPart[] {
  const agent = input.config.agents.list.find((a) => a.id === input.agentId);
  const identity = [
    `You are ${agent?.name ?? input.agentId}, an assistant reached through Switchboard.`,
    `Model: ${input.modelRef}. default_model: ${input.config.agents.defaults.model}.`,
    "Answer the person directly and briefly.",
  ].join("\n");
  const parts: PromptPart[] = [
    { kind: "identity", title: "Identity", text: identity },
    { kind: "session", title: "Session", text: sessionPart(input) },
  ];
  for (const file of input.files ?? []) {
    parts.push({
      kind: "file",
      title: file.name,
      text: `## ${file.name}\n${file.text}`,
      file: { name: file.name, originalChars: file.originalChars, truncated: file.truncated },
    });
  }
  const tools = toolsPart(input.toolNames ?? []);
  if (tools) parts.push({ kind: "tools", title: "Tool notes", text: tools });
  if (input.extra?.trim()) parts.push({ kind: "extra", title: "Extra", text: input.extra.trim() });
  return parts;
}

/** The system prompt as one text: the parts of {@link buildPromptParts}, separated by blank lines. */
export function joinPromptParts(parts: readonly PromptPart[]): string {
  return parts.map((part) => part.text).join("\n\n");
}

/** The system prompt of a turn (see {@link buildPromptParts}). */
export function buildSystemPrompt(input: SystemPromptInput): string {
  return joinPromptParts(buildPromptParts(input));
}
