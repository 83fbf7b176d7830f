import type { TranscriptMessage, TranscriptMessageInput } from "../sessions/transcripts/index.js";

// The transcript is append-only: `/compact` appends one system message that starts with this marker
// and carries the summary. Whoever builds a model's context reads from the last marker on, so the
// summary stands in for everything before it (the agent runtime and /context apply this rule).

/** How a compaction summary starts in the transcript. */
export const COMPACTION_MARKER = "[compaction]";

/** True for the system message a `/compact` appended. */
export function isCompactionMarker(message: TranscriptMessage): boolean {
  return (
    message.role === "system" && typeof message.content === "string" && message.content.startsWith(COMPACTION_MARKER)
  );
}

/** The messages a model sees: from the last compaction marker (included) on, or all of them. */
export function sinceLastCompaction<T extends TranscriptMessage>(messages: readonly T[]): T[] {
  const at = messages.findLastIndex(isCompactionMarker);
  return at < 0 ? [...messages] : messages.slice(at);
}

/** The transcript message that records a compaction. */
export function compactionMessage(summary: string, runId?: string): TranscriptMessageInput {
  return {
    role: "system",
    content: `${COMPACTION_MARKER} ${summary.trim()}`,
    provenance: { kind: "system" },
    ...(runId && { runId }),
  };
}
