import { open, type FileHandle } from "node:fs/promises";
import { ErrorCodes, SwitchboardError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { parseTranscriptLine } from "./parse-transcript-line.js";
import { readAt, readLinesBackward } from "./read-lines-backward.js";
import { decodeTranscriptCursor, encodeTranscriptCursor, staleCursorError } from "./transcript-cursor.js";
import { isToolMessage, type TranscriptMessage } from "./transcript-event.js";

/** Options of {@link readTail}. */
export interface ReadTailOptions {
  /** how many messages at most; a positive integer (callers clamp, e.g. 1000 for sessions_history) */
  limit: number;
  /** keep `toolCall` and `toolResult` messages; default false */
  includeTools?: boolean;
  /** from a previous page: return the messages before that page */
  cursor?: string;
}

/** A page of messages, oldest first, and how to get the page before it. */
export interface TranscriptPage {
  messages: TranscriptMessage[];
  /** set exactly when `hasMore`: pass it back to read the older page */
  cursor?: string;
  /** true when older messages (matching `includeTools`) exist before this page */
  hasMore: boolean;
}

/** What {@link readTail} needs besides the file. */
export interface ReadTailDeps {
  logger: Logger;
  chunkSize: number;
  /** the size to read up to, taken while no append is in flight so it ends on a whole line */
  snapshotSize: (handle: FileHandle) => Promise<number>;
}

async function openForRead(file: string): Promise<FileHandle | undefined> {
  try {
    return await open(file, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

async function endOfPage(handle: FileHandle, size: number, cursor: string | undefined): Promise<number> {
  if (cursor === undefined) return size;
  const offset = decodeTranscriptCursor(cursor);
  if (offset > size)
    throw staleCursorError(cursor, "it points past the end of the transcript (was the session reset or compacted?)");
  if (offset > 0 && (await readAt(handle, offset - 1, 1))[0] !== 0x0a)
    throw staleCursorError(cursor, "it does not point at the start of a line");
  return offset;
}

/**
 * The last `limit` messages before the cursor (or the end), read backwards in chunks: time and memory
 * depend on `limit` and the size of the lines read, not on the length of the file. Unreadable lines
 * are skipped with a warning; a missing file is an empty page.
 */
export async function readTail(file: string, options: ReadTailOptions, deps: ReadTailDeps): Promise<TranscriptPage> {
  const { limit, includeTools = false, cursor } = options;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `Invalid history limit ${String(limit)}: use a whole number of at least 1.`,
    );
  }
  if (cursor !== undefined) decodeTranscriptCursor(cursor); // a bad cursor fails even when the file is missing
  const handle = await openForRead(file);
  if (!handle) return { messages: [], hasMore: false };
  try {
    const end = await endOfPage(handle, await deps.snapshotSize(handle), cursor);
    // One match beyond `limit` tells whether an older page exists, so `hasMore` is exact.
    const found: { offset: number; message: TranscriptMessage }[] = [];
    for await (const line of readLinesBackward(handle, end, deps.chunkSize)) {
      const parsed = parseTranscriptLine(line.bytes.toString("utf8"));
      if (parsed.kind === "invalid") {
        const message = line.terminated
          ? "skipping unreadable transcript line"
          : "skipping torn last transcript line (a crash during an append?)";
        deps.logger.warn({ file, offset: line.offset, reason: parsed.reason }, message);
        continue;
      }
      if (parsed.kind !== "message" || (!includeTools && isToolMessage(parsed.message))) continue;
      found.push({ offset: line.offset, message: parsed.message });
      if (found.length > limit) break;
    }
    const hasMore = found.length > limit;
    const page = found.slice(0, limit);
    const oldest = page[page.length - 1];
    return {
      messages: page.reverse().map((entry) => entry.message),
      ...(hasMore && oldest ? { cursor: encodeTranscriptCursor(oldest.offset) } : {}),
      hasMore,
    };
  } finally {
    await handle.close();
  }
}
