// What every transcripts backend shares: the header an append creates, the check of a message, and
// paging by sequence number (the backends without byte offsets: memory and PostgreSQL).
import { ErrorCodes, SwitchboardError } from "../../errors.js";
import { fileStamp } from "../../state/atomic-json-file.js";
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
import type { AppendOptions, ReadTailOptions, TranscriptPage } from "./transcripts-port.js";

/** A message and its sequence number in its transcript (1, 2, ...). */
export interface SequencedMessage {
  seq: number;
  message: TranscriptMessage;
}

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
  return checkedMessageJson(input, nowMs).message;
}

/** {@link checkedMessage} and its JSON text, for a backend that writes the text (one serialization instead of two). */
export function checkedMessageJson(
  input: object & { timestamp?: number },
  nowMs: number,
): { message: TranscriptMessage; json: string } {
  const checked = TranscriptMessageSchema.safeParse({ ...input, timestamp: input.timestamp ?? nowMs });
  if (!checked.success)
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `Invalid transcript message: ${describeIssues(checked.error.issues)}.`,
    );
  // A JSON round trip: what is stored is what a reader gets back, whatever the backend.
  try {
    const json = JSON.stringify(checked.data);
    return { message: JSON.parse(json) as TranscriptMessage, json };
  } catch (err) {
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `Transcript message is not serializable as JSON: ${(err as Error).message}.`,
    );
  }
}

/** The sequence number a page ends before: the cursor's, or `nextSeq` (the one the next append gets) without one. */
export function pageEnd(options: ReadTailOptions, nextSeq: number): number {
  assertTailLimit(options.limit);
  if (options.cursor === undefined) return nextSeq;
  const before = decodeTranscriptCursor(options.cursor);
  if (before > nextSeq)
    throw staleCursorError(options.cursor, "it points past the end of the transcript (was the session reset?)");
  return before;
}

/** The page made of up to `limit + 1` matching events found newest first (one more tells that older ones exist). */
export function pageFrom(newestFirst: readonly SequencedMessage[], limit: number): TranscriptPage {
  const hasMore = newestFirst.length > limit;
  const page = newestFirst.slice(0, limit);
  return {
    messages: page.reverse().map((e) => e.message),
    ...(hasMore ? { cursor: encodeTranscriptCursor(page[0]!.seq) } : {}),
    hasMore,
  };
}

/** The name a transcript gets when archived at `nowMs` (the local backend's file name form), the `n`th when taken. */
export function archiveName(id: string, nowMs: number, n: number): string {
  return `${id}.jsonl.deleted.${fileStamp(nowMs)}${n > 0 ? `-${n}` : ""}`;
}

/** The page of `events` (oldest first) before the cursor, read the way the sequenced backends read it. */
export function pageOf(events: readonly SequencedMessage[], options: ReadTailOptions, nextSeq: number): TranscriptPage {
  const before = pageEnd(options, nextSeq);
  const found: SequencedMessage[] = [];
  for (let i = events.length - 1; i >= 0 && found.length <= options.limit; i--) {
    const event = events[i]!;
    if (event.seq >= before || (!options.includeTools && isToolMessage(event.message))) continue;
    found.push(event);
  }
  return pageFrom(found, options.limit);
}
