import path from "node:path";
import { ErrorCodes, SwitchboardError } from "../../errors.js";
import { assertValidSessionId, isValidSessionId } from "./session-id.js";

/** A Telegram forum topic (or DM thread) id: numbers as is, strings URI-encoded in file names. */
export type TopicId = string | number;

const EXTENSION = ".jsonl";
const TOPIC_MARK = "-topic-";

function encodeTopicId(topicId: TopicId): string {
  if (typeof topicId === "number") {
    if (!Number.isFinite(topicId))
      throw new SwitchboardError(
        ErrorCodes.INVALID_ARGUMENT,
        `Invalid topic id ${topicId}: use a finite number or a non-empty string.`,
      );
    return String(topicId);
  }
  if (topicId.length === 0)
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      'Invalid topic id "": use a finite number or a non-empty string.',
    );
  return encodeURIComponent(topicId);
}

/** `<sessionId>.jsonl`, or `<sessionId>-topic-<topicId>.jsonl` for a topic session (`abc/def` -> `abc%2Fdef`). */
export function transcriptFileName(sessionId: string, topicId?: TopicId): string {
  assertValidSessionId(sessionId);
  return topicId === undefined
    ? `${sessionId}${EXTENSION}`
    : `${sessionId}${TOPIC_MARK}${encodeTopicId(topicId)}${EXTENSION}`;
}

/** A transcript file name taken apart. */
export interface TranscriptFileName {
  sessionId: string;
  /** decoded; a numeric topic comes back as its decimal string */
  topicId?: string;
}

/** The session (and topic) a file name written by {@link transcriptFileName} belongs to, or null. */
export function parseTranscriptFileName(name: string): TranscriptFileName | null {
  if (!name.endsWith(EXTENSION)) return null;
  const stem = name.slice(0, -EXTENSION.length);
  // UUIDs and safe ids never contain "-topic-" on purpose; the last mark wins for odd legacy ids.
  const mark = stem.lastIndexOf(TOPIC_MARK);
  if (mark > 0) {
    const sessionId = stem.slice(0, mark);
    let topicId: string;
    try {
      topicId = decodeURIComponent(stem.slice(mark + TOPIC_MARK.length));
    } catch {
      return null; // malformed %-escape: not a name we wrote
    }
    if (isValidSessionId(sessionId) && topicId.length > 0) return { sessionId, topicId };
  }
  return isValidSessionId(stem) ? { sessionId: stem } : null;
}

/** The file of transcript `id` in `dir` (the local backend's layout). */
export function transcriptFile(dir: string, id: string): string {
  return path.join(path.resolve(dir), `${assertTranscriptId(id)}${EXTENSION}`);
}

/**
 * The id of a transcript: its session id, or `<sessionId>-topic-<topicId>` for a topic session
 * (the file name {@link transcriptFileName} gives, without `.jsonl`). Every backend keys a
 * transcript by it; the local one keeps it in `<id>.jsonl`.
 */
export function transcriptId(sessionId: string, topicId?: TopicId): string {
  return transcriptFileName(sessionId, topicId).slice(0, -EXTENSION.length);
}

/** The transcript id a session entry's `sessionFile` (a file name, or an older absolute path) names, or null. */
export function transcriptIdOfFile(sessionFile: string): string | null {
  const name = path.basename(sessionFile);
  return parseTranscriptFileName(name) ? name.slice(0, -EXTENSION.length) : null;
}

/** Returns `id` when it names a transcript (see {@link transcriptId}); otherwise throws INVALID_ARGUMENT. */
export function assertTranscriptId(id: string): string {
  if (typeof id === "string" && id.endsWith(EXTENSION))
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `Invalid transcript id ${JSON.stringify(id)}: pass the id (the session id, or "<sessionId>-topic-<topic>"), not a file name; transcriptRef(entry) gives it.`,
    );
  const parsed = typeof id === "string" ? parseTranscriptFileName(`${id}${EXTENSION}`) : null;
  // Only the exact form transcriptFileName writes: a raw "/" in a topic would leave the folder.
  if (parsed && transcriptFileName(parsed.sessionId, parsed.topicId) === `${id}${EXTENSION}`) return id;
  return assertValidSessionId(id); // throws, saying what is wrong
}
