// Transcript lines and expectations shared by the session tools' tests (test/tools/sessions-*.test.ts).
import type { TranscriptMessageInput } from "../../src/sessions/transcripts/index.js";

/** A UUID, as a regular expression source. */
export const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
/** A user line. */
export const user = (content: string): TranscriptMessageInput => ({ role: "user", content });
/** An assistant line of one text part. */
export const assistant = (text: string): TranscriptMessageInput => ({
  role: "assistant",
  content: [{ type: "text", text }],
});
/** An assistant tool call `id` (of sessions_list). */
export const toolCall = (id: string): TranscriptMessageInput => ({
  role: "toolCall",
  content: [{ type: "toolCall", id, name: "sessions_list", arguments: {} }],
});
/** The result of tool call `id`. */
export const toolResult = (id: string): TranscriptMessageInput => ({
  role: "toolResult",
  content: [{ type: "toolResult", toolCallId: id, content: "{}" }],
});
/** The error a tool gives for a session the caller cannot reach. */
export const unknownSession = (ref: string) =>
  `Unknown session '${ref}'. Use sessions_list to see the keys you can reach.`;
/** The keys of a sessions_list result. */
export const keysOf = (result: Record<string, any>) => (result.sessions as Array<{ key: string }>).map((s) => s.key);
