import { open, type FileHandle } from "node:fs/promises";
import type { Logger } from "../../logger.js";
import { parseTranscriptLine } from "./parse-transcript-line.js";
import { readAt, readLinesBackward } from "./read-lines-backward.js";
import {
  assertTailLimit,
  decodeTranscriptCursor,
  encodeTranscriptCursor,
  staleCursorError,
} from "./transcript-cursor.js";
import { isToolMessage, type TranscriptMessage } from "./transcript-event.js";
import type { ReadTailOptions, TranscriptPage } from "./transcripts-port.js";

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
  assertTailLimit(limit);
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
