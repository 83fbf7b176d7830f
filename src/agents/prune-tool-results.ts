import type { ModelMessage } from "ai";

/** What an older tool result becomes in the messages sent to the model. */
export const PRUNED_TOOL_RESULT = "[older tool result pruned]";

/** Tool results that reach the model in full, newest first. */
export const DEFAULT_KEEP_TOOL_RESULTS = 3;

/**
 * Replaces all but the newest `keep` tool results with {@link PRUNED_TOOL_RESULT}. Returns new
 * messages and leaves the input (and so the transcript) untouched.
 */
export function pruneToolResults(messages: readonly ModelMessage[], keep = DEFAULT_KEEP_TOOL_RESULTS): ModelMessage[] {
  let remaining = Math.max(0, keep);
  const pruned = [...messages];
  for (let i = pruned.length - 1; i >= 0; i--) {
    const message = pruned[i]!;
    if (message.role !== "tool") continue;
    const content = [...message.content].reverse().map((part) => {
      if (part.type !== "tool-result") return part;
      if (remaining > 0) {
        remaining--;
        return part;
      }
      return { ...part, output: { type: "text" as const, value: PRUNED_TOOL_RESULT } };
    });
    pruned[i] = { ...message, content: content.reverse() };
  }
  return pruned;
}
