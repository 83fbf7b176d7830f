import { ErrorCodes, SwitchboardError, ToolArgumentError } from "../../errors.js";

const BASE64URL = /^[A-Za-z0-9_-]{1,64}$/;

/** An opaque paging cursor meaning "messages before position `offset`" (a byte offset in a file, or a sequence number; base64url of `{"o":offset}`). */
export function encodeTranscriptCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset }), "utf8").toString("base64url");
}

function invalid(cursor: string, why: string): ToolArgumentError {
  const shown = JSON.stringify(cursor.length > 40 ? `${cursor.slice(0, 37)}...` : cursor);
  return new ToolArgumentError(
    `Invalid history cursor ${shown}: ${why}. Pass back the cursor of the previous page unchanged, or omit it to start from the newest message.`,
  );
}

/** The byte offset inside a cursor made by {@link encodeTranscriptCursor}; INVALID_ARGUMENT otherwise. */
export function decodeTranscriptCursor(cursor: string): number {
  if (!BASE64URL.test(cursor)) throw invalid(cursor, "it is not a cursor this server issued");
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalid(cursor, "it is not a cursor this server issued");
  }
  const offset = (value as { o?: unknown } | null)?.o;
  if (typeof offset !== "number" || !Number.isSafeInteger(offset) || offset < 0)
    throw invalid(cursor, "it holds no valid offset");
  return offset;
}

/** The error for a cursor whose offset no longer fits the file (reset, compacted or another file). */
export function staleCursorError(cursor: string, why: string): ToolArgumentError {
  return invalid(cursor, why);
}

/** Refuses a page size that is not a whole number of at least 1 (every backend's `readTail`). */
export function assertTailLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `Invalid history limit ${String(limit)}: use a whole number of at least 1.`,
    );
}
