import type { TranscriptMessage } from "../../sessions/transcripts/index.js";

/** Rough tokens of a text: four characters per token (good enough to compare sizes; no tokenizer needed). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The text of a message as a model would read it: text as is, anything else as JSON. */
export function messageText(message: TranscriptMessage): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .map((block) => (block.type === "text" && typeof block.text === "string" ? block.text : JSON.stringify(block)))
    .join("\n");
}

/** How big a run of messages is: count, estimated tokens, and count per role. */
export interface ContextSize {
  messages: number;
  tokens: number;
  byRole: Record<string, number>;
}

/** Measures `messages` (see {@link estimateTokens}). */
export function contextSize(messages: readonly TranscriptMessage[]): ContextSize {
  const byRole: Record<string, number> = {};
  let tokens = 0;
  for (const message of messages) {
    byRole[message.role] = (byRole[message.role] ?? 0) + 1;
    tokens += estimateTokens(messageText(message));
  }
  return { messages: messages.length, tokens, byRole };
}
