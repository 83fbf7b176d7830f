import { type FileHandle, open } from "node:fs/promises";
import type { Logger } from "../../logger.js";
import { parseTranscriptLine } from "./parse-transcript-line.js";
import type { TranscriptHeader } from "./transcript-event.js";

/** A header line longer than this is not a header. */
const MAX_HEADER_BYTES = 1024 * 1024;

/** The first line of `file` parsed as a header; undefined (with a warning) when it is not one, or when the file is missing. */
export async function readHeader(
  file: string,
  logger: Logger,
  chunkSize: number,
): Promise<TranscriptHeader | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  try {
    const chunks: Buffer[] = [];
    let read = 0;
    while (read < MAX_HEADER_BYTES) {
      const chunk = Buffer.allocUnsafe(chunkSize);
      const { bytesRead } = await handle.read(chunk, 0, chunkSize, read);
      if (bytesRead === 0) break;
      const newline = chunk.subarray(0, bytesRead).indexOf(0x0a);
      chunks.push(chunk.subarray(0, newline === -1 ? bytesRead : newline));
      read += bytesRead;
      if (newline !== -1) break;
    }
    if (read === 0) return undefined; // an empty file has no header yet
    const parsed = parseTranscriptLine(Buffer.concat(chunks).toString("utf8"));
    if (parsed.kind === "header") return parsed.header;
    const reason = parsed.kind === "invalid" ? parsed.reason : "the first line is not a session header";
    logger.warn({ file, offset: 0, reason }, "transcript has no valid header line");
    return undefined;
  } finally {
    await handle.close();
  }
}
