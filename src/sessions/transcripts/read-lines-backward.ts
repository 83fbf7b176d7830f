import type { FileHandle } from "node:fs/promises";

/** One line of a file, read from the end. */
export interface RawLine {
  /** byte offset of the line's first byte */
  offset: number;
  /** the line without its newline */
  bytes: Buffer;
  /** false only for bytes after the last newline: a line still being written, or torn by a crash */
  terminated: boolean;
}

/** Reads exactly `length` bytes at `position`. */
export async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0)
      throw new Error(`file ended at byte ${position + filled} while reading up to byte ${position + length}`);
    filled += bytesRead;
  }
  return buffer;
}

/** `head` followed by `laterReversed` (collected newest first). */
function join(head: Buffer, laterReversed: Buffer[]): Buffer {
  return laterReversed.length === 0 ? head : Buffer.concat([head, ...laterReversed.reverse()]);
}

/**
 * The non-empty lines of bytes `[0, end)`, newest first, read backwards in chunks of `chunkSize`.
 * Stopping the iteration stops the reading, so memory holds one chunk plus the line being collected.
 */
export async function* readLinesBackward(handle: FileHandle, end: number, chunkSize: number): AsyncGenerator<RawLine> {
  let pos = end;
  let pending: Buffer[] = []; // later bytes of a line that starts before `pos`, newest piece first
  let atEnd = true; // the next line found is the one after the last newline
  while (pos > 0) {
    const start = Math.max(0, pos - chunkSize);
    const chunk = await readAt(handle, start, pos - start);
    let cut = chunk.length;
    while (cut > 0) {
      // lastIndexOf with a negative offset counts from the end, so `cut > 0` guards it.
      const newline = chunk.lastIndexOf(0x0a, cut - 1);
      if (newline === -1) break;
      const bytes = join(chunk.subarray(newline + 1, cut), pending);
      pending = [];
      if (bytes.length > 0) yield { offset: start + newline + 1, bytes, terminated: !atEnd };
      atEnd = false;
      cut = newline;
    }
    if (cut > 0) pending.push(chunk.subarray(0, cut));
    pos = start;
  }
  const first = join(Buffer.alloc(0), pending);
  if (first.length > 0) yield { offset: 0, bytes: first, terminated: !atEnd };
}
