import { chunkText } from "../../src/index.js";

/** Limits of one Discord message. */
export interface MessageLimits {
  maxLength: number;
  /** Discord collapses taller messages behind "read more" */
  maxLines: number;
}

/**
 * A text as Discord messages: pieces of at most `maxLength` characters and `maxLines` lines, a code
 * block cut in two closed at the end of one piece and reopened (with its language) in the next.
 * The delivery gate already chunks replies this way; interaction answers do not pass the gate.
 */
export function splitMessage(text: string, limits: MessageLimits): string[] {
  return chunkText(text, limits.maxLength, { maxLines: limits.maxLines });
}
