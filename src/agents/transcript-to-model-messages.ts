import type { JSONValue, ModelMessage, TextPart, ToolCallPart, ToolResultPart } from "ai";
import { type ContentBlock, type TranscriptMessage, isCommandMessage } from "../sessions/transcripts/index.js";

/** What a model sees for a tool call whose result never reached the transcript (an aborted run). */
export const MISSING_TOOL_RESULT = "[no result: the run ended before this tool returned]";

/** A transcript as model input: system texts (to merge into the system prompt) and messages. */
export interface ModelConversation {
  system: string[];
  messages: ModelMessage[];
}

type ToolOutput = ToolResultPart["output"];

const blocksOf = (message: TranscriptMessage): ContentBlock[] =>
  typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;

const textOf = (blocks: readonly ContentBlock[]): string =>
  blocks.flatMap((block) => (block.type === "text" && typeof block.text === "string" ? [block.text] : [])).join("\n");

function toJsonValue(value: unknown): JSONValue {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as JSONValue);
}

/** A stored tool result as model output: text for strings and text blocks, JSON otherwise. */
export function toToolOutput(content: unknown, isError = false): ToolOutput {
  const textBlocks =
    Array.isArray(content) && content.every((item) => item?.type === "text" && typeof item.text === "string");
  const text =
    typeof content === "string"
      ? content
      : textBlocks
        ? (content as { text: string }[]).map((item) => item.text).join("\n")
        : undefined;
  if (text !== undefined) return isError ? { type: "error-text", value: text } : { type: "text", value: text };
  const value = toJsonValue(content);
  return isError ? { type: "error-json", value } : { type: "json", value };
}

/**
 * Converts transcript messages into AI SDK messages. System messages go to `system` (Anthropic
 * rejects system messages between turns). Tool calls left without a result get {@link MISSING_TOOL_RESULT}
 * before the next message, and results without a matching call are dropped, so every provider accepts the history.
 * Chat commands and their replies (kept in the transcript for people) are left out.
 */
export function transcriptToModelMessages(history: readonly TranscriptMessage[]): ModelConversation {
  const system: string[] = [];
  const messages: ModelMessage[] = [];
  const pending = new Map<string, string>();
  const result = (toolCallId: string, output: ToolOutput): ToolResultPart => {
    const toolName = pending.get(toolCallId)!;
    pending.delete(toolCallId);
    return { type: "tool-result", toolCallId, toolName, output };
  };
  const closePending = () => {
    if (pending.size === 0) return;
    messages.push({
      role: "tool",
      content: [...pending.keys()].map((id) => result(id, { type: "error-text", value: MISSING_TOOL_RESULT })),
    });
  };
  for (const message of history) {
    if (isCommandMessage(message)) continue;
    const blocks = blocksOf(message);
    if (message.role === "system") {
      const text = textOf(blocks).trim();
      if (text) system.push(text);
    } else if (message.role === "toolResult") {
      const parts = toolResultParts(message, blocks, pending).map(([id, output]) => result(id, output));
      if (parts.length > 0) messages.push({ role: "tool", content: parts });
    } else if (message.role === "user") {
      closePending();
      const text = textOf(blocks);
      if (text.trim()) messages.push({ role: "user", content: text });
    } else {
      closePending();
      const parts = assistantParts(blocks);
      for (const part of parts) if (part.type === "tool-call") pending.set(part.toolCallId, part.toolName);
      if (parts.length > 0) messages.push({ role: "assistant", content: assistantContent(parts) });
    }
  }
  closePending();
  return { system, messages };
}

/**
 * A reply that is one text goes as a string, the SDK's own shorthand for that one text part (what
 * the provider gets is the same): the SDK checks every message of every call against its schema,
 * and a string is checked in a fraction of the work of a part array (tried against each role).
 */
function assistantContent(parts: Array<TextPart | ToolCallPart>): string | Array<TextPart | ToolCallPart> {
  const [only] = parts;
  return parts.length === 1 && only?.type === "text" ? only.text : parts;
}

function assistantParts(blocks: readonly ContentBlock[]): Array<TextPart | ToolCallPart> {
  return blocks.flatMap((block): Array<TextPart | ToolCallPart> => {
    if (block.type === "text" && typeof block.text === "string" && block.text)
      return [{ type: "text", text: block.text }];
    if (block.type === "toolCall" && typeof block.id === "string" && typeof block.name === "string") {
      return [{ type: "tool-call", toolCallId: block.id, toolName: block.name, input: block.arguments ?? {} }];
    }
    return [];
  });
}

// Results are matched to open calls by id; a bare text result (older format) answers the oldest open call.
function toolResultParts(
  message: TranscriptMessage,
  blocks: readonly ContentBlock[],
  pending: ReadonlyMap<string, string>,
): Array<[string, ToolOutput]> {
  const results = blocks.filter((block) => block.type === "toolResult" && typeof block.toolCallId === "string");
  if (results.length > 0) {
    return results
      .filter((block) => pending.has(block.toolCallId as string))
      .map((block) => [block.toolCallId as string, toToolOutput(block.content, block.isError === true)]);
  }
  const id =
    typeof message.toolCallId === "string" && pending.has(message.toolCallId)
      ? message.toolCallId
      : pending.keys().next().value;
  return id === undefined
    ? []
    : [[id, toToolOutput(typeof message.content === "string" ? message.content : blocks, message.isError === true)]];
}
