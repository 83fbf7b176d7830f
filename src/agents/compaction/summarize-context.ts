import { SwitchboardError } from "../../errors.js";
import { generateText } from "ai";
import type { TranscriptMessage } from "../../sessions/transcripts/index.js";
import { isCompactionMarker } from "../compaction-marker.js";
import type { ResolvedModel } from "../models/index.js";
import { transcriptToModelMessages } from "../transcript-to-model-messages.js";
import { COMPACTION_STRINGS } from "./compaction-strings.js";
import { messageText } from "./context-size.js";

/** What {@link summarizeContext} works on. */
export interface SummaryInput {
  resolved: ResolvedModel;
  /** the context to replace, oldest first (a previous summary included) */
  messages: readonly TranscriptMessage[];
  instructions: string;
  signal?: AbortSignal;
}

const OFFLINE_LINES = 12;
const OFFLINE_LINE_CHARS = 160;

// The offline model echoes; a summary made by it would say nothing. Keep the newest lines instead.
function extractiveSummary(messages: readonly TranscriptMessage[]): string {
  const lines = messages
    .filter((m) => m.role === "user" || m.role === "assistant" || isCompactionMarker(m))
    .map((m) => `- ${m.role}: ${messageText(m).replace(/\s+/g, " ").trim().slice(0, OFFLINE_LINE_CHARS)}`)
    .filter((line) => !line.endsWith(": "));
  return [COMPACTION_STRINGS.offline(messages.length), ...lines.slice(-OFFLINE_LINES)].join("\n");
}

/** A summary of `messages` by the session's model (an extract of the newest lines for the offline model). */
export async function summarizeContext(input: SummaryInput): Promise<string> {
  if (input.resolved.offline) return extractiveSummary(input.messages);
  const conversation = transcriptToModelMessages(input.messages);
  const result = await generateText({
    model: input.resolved.model,
    system: [COMPACTION_STRINGS.systemPrompt, ...conversation.system].join("\n\n"),
    messages: [...conversation.messages, { role: "user", content: COMPACTION_STRINGS.request(input.instructions) }],
    ...(input.signal && { abortSignal: input.signal }),
  });
  const summary = result.text.trim();
  if (!summary)
    throw new SwitchboardError("MODEL_FAILED", "the model returned an empty summary; the context was left as it was");
  return summary;
}
