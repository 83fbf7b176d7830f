import type { StepResult, ToolSet } from "ai";
import type { ContentBlock, TranscriptMessage } from "../sessions/transcripts/index.js";

/** The text a model is told for a tool's error (the transcript keeps the same). */
export const errorText = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "string" ? error : JSON.stringify(error);

/**
 * The transcript messages of one finished step: the assistant message (text and tool calls as
 * blocks, with the step's usage) and then one `toolResult` message per result or tool error.
 */
export function stepToTranscriptMessages(step: StepResult<ToolSet>, timestamp: number): TranscriptMessage[] {
  const blocks: ContentBlock[] = [];
  const results: TranscriptMessage[] = [];
  for (const part of step.content) {
    if (part.type === "text" && part.text) blocks.push({ type: "text", text: part.text });
    else if (part.type === "tool-call")
      blocks.push({ type: "toolCall", id: part.toolCallId, name: part.toolName, arguments: part.input });
    else if (part.type === "tool-result" || part.type === "tool-error") {
      const isError = part.type === "tool-error";
      const content = isError ? errorText(part.error) : part.output;
      const block = {
        type: "toolResult",
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        content,
        ...(isError && { isError: true }),
      };
      results.push({ role: "toolResult", content: [block], timestamp });
    }
  }
  const { inputTokens = 0, outputTokens = 0 } = step.usage;
  const usage = {
    input: inputTokens,
    output: outputTokens,
    totalTokens: step.usage.totalTokens ?? inputTokens + outputTokens,
  };
  const assistant: TranscriptMessage[] =
    blocks.length > 0 ? [{ role: "assistant", content: blocks, timestamp, usage }] : [];
  return [...assistant, ...results];
}
