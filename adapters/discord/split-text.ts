import { chunkText } from "../../src/index.js";

/** Limits of one Discord message. */
export interface MessageLimits {
  maxLength: number;
  /** Discord collapses taller messages behind "read more" */
  maxLines: number;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * Splits one chunk that is short enough but too tall into pieces of at most `maxLines` lines. A
 * code block cut in two is closed at the end of a piece and reopened (with its language) at the
 * start of the next, so every piece renders; the closing and opening lines count as lines.
 */
function splitLines(text: string, maxLines: number): string[] {
  const lines = text.split("\n");
  if (lines.length <= maxLines) return [text];
  const pieces: string[] = [];
  let current: string[] = [];
  let opener: string | undefined;
  for (const line of lines) {
    // room for the closing fence when a block is open
    if (current.length >= maxLines - (opener ? 1 : 0) && current.some((l) => l !== opener)) {
      pieces.push([...current, ...(opener ? [opener.trim().match(FENCE)![1]!] : [])].join("\n"));
      current = opener ? [opener] : [];
    }
    current.push(line);
    const fence = FENCE.exec(line);
    if (fence) opener = opener ? undefined : line;
  }
  if (current.some((l) => l.trim() !== "")) pieces.push(current.join("\n"));
  return pieces;
}

/** A text as Discord messages: chunks of at most `maxLength` characters, then of at most `maxLines` lines. */
export function splitMessage(text: string, limits: MessageLimits): string[] {
  return chunkText(text, limits.maxLength).flatMap((chunk) => splitLines(chunk, limits.maxLines));
}
