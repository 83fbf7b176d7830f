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

function refuse(ref: string, dir: string): never {
  throw new SwitchboardError(
    ErrorCodes.INVALID_ARGUMENT,
    `Transcript ${JSON.stringify(ref)} resolves outside the transcript folder ${dir}. Pass a session id or a file name inside that folder, such as "<sessionId>.jsonl".`,
  );
}

/**
 * The absolute path of a transcript in `dir`. `ref` is a file name ending in `.jsonl` (relative to
 * `dir`, or absolute inside it; e.g. an entry's `sessionFile`) or else a bare session id. Anything
 * that would resolve outside `dir` is refused with INVALID_ARGUMENT.
 */
export function resolveTranscriptPath(dir: string, ref: string): string {
  const root = path.resolve(dir);
  if (!ref.endsWith(EXTENSION)) return path.join(root, `${assertValidSessionId(ref)}${EXTENSION}`);
  if (ref.includes("\0")) refuse(ref, root);
  const full = path.resolve(root, ref);
  const rel = path.relative(root, full);
  if (rel === "" || rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) refuse(ref, root);
  return full;
}
