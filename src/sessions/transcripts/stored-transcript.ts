// What every transcripts backend shares: the header an append creates, the check of a message, and
// paging by sequence number (the backends without byte offsets: memory and PostgreSQL).
import { ErrorCodes, SwitchboardError } from "../../errors.js";
import { describeIssues } from "./parse-transcript-line.js";
import { assertValidSessionId } from "./session-id.js";
import {
  assertTailLimit,
  decodeTranscriptCursor,
  encodeTranscriptCursor,
  staleCursorError,
} from "./transcript-cursor.js";
import {
  isToolMessage,
  TRANSCRIPT_VERSION,
  type TranscriptHeader,
  type TranscriptMessage,
  TranscriptMessageSchema,
} from "./transcript-event.js";
import { assertTranscriptId, parseTranscriptFileName } from "./transcript-path.js";
import type { AppendOptions, TranscriptPage } from "./transcripts-port.js";

/** The header of a transcript an append creates (shared by the backends that keep no file). */
export function newTranscriptHeader(id: string, options: AppendOptions | undefined, nowMs: number): TranscriptHeader {
  return {
    type: "session",
    version: TRANSCRIPT_VERSION,
    id: assertValidSessionId(
      options?.sessionId ?? parseTranscriptFileName(`${assertTranscriptId(id)}.jsonl`)!.sessionId,
    ),
    timestamp: new Date(nowMs).toISOString(),
    cwd: options?.cwd ?? process.cwd(),
    ...(options?.parentSession !== undefined ? { parentSession: options.parentSession } : {}),
  };
}

/** A message checked and given its timestamp, as every backend stores it (INVALID_ARGUMENT when malformed). */
export function checkedMessage(input: object & { timestamp?: number }, nowMs: number): TranscriptMessage {
  const checked = TranscriptMessageSchema.safeParse({ ...input, timestamp: input.timestamp ?? nowMs });
  if (!checked.success)
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `Invalid transcript message: ${describeIssues(checked.error.issues)}.`,
    );
  // A JSON round trip: what is stored is what a reader gets back, whatever the backend.
  try {
    return JSON.parse(JSON.stringify(checked.data)) as TranscriptMessage;
  } catch (err) {
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `Transcript message is not serializable as JSON: ${(err as Error).message}.`,
    );
  }
}

/** The page of `events` (oldest first, numbered) before `cursor`, as every backend without byte offsets pages. */
export function pageOf(
  events: readonly { seq: number; message: TranscriptMessage }[],
  options: { limit: number; includeTools?: boolean; cursor?: string },
  nextSeq: number,
): TranscriptPage {
  assertTailLimit(options.limit);
  const before = options.cursor === undefined ? nextSeq : decodeTranscriptCursor(options.cursor);
  if (options.cursor !== undefined && before > nextSeq)
    throw staleCursorError(options.cursor, "it points past the end of the transcript (was the session reset?)");
  const found: { seq: number; message: TranscriptMessage }[] = [];
  for (let i = events.length - 1; i >= 0 && found.length <= options.limit; i--) {
    const event = events[i]!;
    if (event.seq >= before || (!options.includeTools && isToolMessage(event.message))) continue;
    found.push(event);
  }
  const hasMore = found.length > options.limit;
  const page = found.slice(0, options.limit);
  return {
    messages: page.reverse().map((e) => e.message),
    ...(hasMore ? { cursor: encodeTranscriptCursor(page[0]!.seq) } : {}),
    hasMore,
  };
}
