import { ErrorCodes, SwitchboardError } from "../errors.js";

/** A fenced code block: from its opener line to the start of its closer line (or the end). */
interface FenceSpan {
  start: number;
  /** index just past the opener line */
  bodyStart: number;
  /** start of the closer line; Infinity when the block is never closed */
  end: number;
  opener: string;
  marker: string;
  /** false when the limit leaves no room to close and reopen it; it is then split as plain text */
  repairable: boolean;
}

interface Boundary {
  close: string;
  reopen: string;
  next: number;
}

// A backtick fence's info string holds no backtick (CommonMark).
const FENCE = /^ {0,3}(`{3,}(?=[^`]*$)|~{3,})(.*)$/;
const isSpace = (ch: string | undefined) =>
  ch === " " || ch === "\t" || ch === "\r" || ch === "\n" || ch === "\f" || ch === "\v";

function fenceSpans(text: string, limit: number): FenceSpan[] {
  const spans: FenceSpan[] = [];
  let open: FenceSpan | undefined;
  for (let start = 0; start <= text.length; ) {
    const newline = text.indexOf("\n", start);
    const end = newline < 0 ? text.length : newline;
    const match = FENCE.exec(text.slice(start, end));
    if (match && !open) {
      const opener = match[0].trim();
      open = {
        start,
        bodyStart: end,
        end: Infinity,
        opener,
        marker: match[1]!,
        repairable: opener.length + match[1]!.length + 4 <= limit,
      };
      spans.push(open);
    } else if (
      match &&
      open &&
      match[1]![0] === open.marker[0] &&
      match[1]!.length >= open.marker.length &&
      !match[2]!.trim()
    ) {
      open.end = start;
      open = undefined;
    }
    if (newline < 0) break;
    start = newline + 1;
  }
  return spans;
}

/** Past the whitespace at a split point, keeping the indentation of the next line. */
function skipSeparator(text: string, at: number): number {
  let i = at;
  let afterNewline = -1;
  while (i < text.length && isSpace(text[i])) if (text[i++] === "\n") afterNewline = i;
  return afterNewline >= 0 && i < text.length ? afterNewline : i;
}

function trimEnd(text: string, from: number, to: number): number {
  let end = to;
  while (end > from && isSpace(text[end - 1])) end--;
  return end;
}

const isBlankLineEnd = (text: string, i: number, from: number) => {
  if (text[i] !== "\n") return false;
  let j = i - 1;
  while (j >= from && (text[j] === " " || text[j] === "\t" || text[j] === "\r")) j--;
  return j >= from && text[j] === "\n";
};
const CUTS = [
  isBlankLineEnd,
  (text: string, i: number) => text[i] === "\n",
  (text: string, i: number) => isSpace(text[i]),
];

/** Where the run of non-space characters starting at `at` ends. */
function wordEnd(text: string, at: number): number {
  let i = at;
  while (i < text.length && !isSpace(text[i])) i++;
  return i;
}

/**
 * The end of the next chunk starting at `from` within `budget` characters, and where its separator
 * starts. A cut is taken only when the word after it fits in a chunk (`room`); a longer word is split
 * here, filling this chunk, since it is split anyway. A cut that leaves the chunk under a tenth of its
 * budget ("Echo:" alone) is taken only when nothing later exists.
 */
function findCut(
  text: string,
  from: number,
  firstWord: number,
  budget: number,
  room: number,
  openerEnds: Set<number>,
): { chunkEnd: number; end: number } {
  if (text.length - from <= budget) return { chunkEnd: text.length, end: text.length };
  const max = from + budget;
  const fill = Math.max(firstWord, from + Math.floor(budget / 10));
  for (const [high, low] of [
    [max, fill],
    [fill, firstWord],
  ] as const) {
    for (const isCut of CUTS) {
      // Never right after a fence opener: that would leave an empty block at the end of a chunk.
      for (let i = high; i > low; i--) {
        if (!isCut(text, i, from) || openerEnds.has(i)) continue;
        const next = skipSeparator(text, i);
        return wordEnd(text, next) - next <= room ? { chunkEnd: trimEnd(text, from, i), end: i } : hardCut(text, max);
      }
    }
  }
  return hardCut(text, max);
}

/** A word longer than the budget: split at `max`, never between the halves of a surrogate pair. */
function hardCut(text: string, max: number): { chunkEnd: number; end: number } {
  const code = text.charCodeAt(max - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
  return { chunkEnd: end, end };
}

function boundaryAt(text: string, spans: FenceSpan[], at: number): Boundary {
  if (at >= text.length) return { close: "", reopen: "", next: text.length };
  const next = skipSeparator(text, at);
  const span = spans.find((s) => s.repairable && s.bodyStart <= at && at <= s.end);
  if (!span) return { close: "", reopen: "", next };
  const close = `\n${span.marker}`;
  if (next !== span.end) return { close, reopen: `${span.opener}\n`, next };
  // The block's own closer comes next: the added close replaces it.
  const closerEnd = text.indexOf("\n", span.end);
  return { close, reopen: "", next: closerEnd < 0 ? text.length : skipSeparator(text, closerEnd) };
}

/** Where the chunk from `pos` must end so that it holds at most `lines` lines: the index of its last allowed newline. */
function lineBudgetEnd(text: string, pos: number, lines: number): number | undefined {
  let at = pos - 1;
  for (let n = 0; n < lines; n++) {
    at = text.indexOf("\n", at + 1);
    if (at < 0) return undefined;
  }
  return at;
}

/** Options of {@link chunkText}. */
export interface ChunkOptions {
  /**
   * Most lines one chunk may have, the fence lines added to close and reopen a split code block
   * included (Discord shows 17 before "read more"); at least 3 so a split block still fits.
   */
  maxLines?: number;
}

/**
 * Splits `text` into chunks of at most `limit` UTF-16 units (and `maxLines` lines), at a blank
 * line, else a newline, else a space; a word longer than the limit is cut (never inside a
 * surrogate pair). Only whitespace at a split point is dropped. A fenced code block that is split
 * is closed at the end of one chunk and reopened with the same info string at the start of the
 * next, so every chunk renders. Blank text gives no chunks.
 */
export function chunkText(text: string, limit: number, options: ChunkOptions = {}): string[] {
  checkLimits(limit, options.maxLines);
  const { maxLines } = options;
  const fits = (t: string) => t.length <= limit && (maxLines === undefined || t.split("\n").length <= maxLines);
  if (fits(text)) return /\S/.test(text) ? [text] : [];
  const spans = fenceSpans(text, limit);
  const plan: ChunkPlan = {
    text,
    limit,
    maxLines,
    spans,
    openerEnds: new Set(spans.filter((s) => s.repairable).map((s) => s.bodyStart)),
  };
  const chunks: string[] = [];
  const nonSpace = /\S/g;
  let pos = 0;
  let reopen = "";
  for (;;) {
    nonSpace.lastIndex = pos;
    const firstWord = nonSpace.exec(text)?.index;
    if (firstWord === undefined) break;
    const { chunk, boundary } = nextChunk(plan, pos, firstWord, reopen);
    chunks.push(chunk);
    pos = boundary.next;
    reopen = boundary.reopen;
  }
  return chunks;
}

/** Refuses a chunk limit or line limit no chunk could keep to. */
function checkLimits(limit: number, maxLines: number | undefined): void {
  if (!Number.isInteger(limit) || limit < 2) {
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `chunk limit must be an integer of at least 2, got ${limit}`,
    );
  }
  if (maxLines !== undefined && (!Number.isInteger(maxLines) || maxLines < 3)) {
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `chunk line limit must be an integer of at least 3, got ${maxLines}`,
    );
  }
}

/** What every chunk of one text is cut by. */
interface ChunkPlan {
  text: string;
  limit: number;
  maxLines: number | undefined;
  spans: FenceSpan[];
  openerEnds: Set<number>;
}

/** The chunk starting at `pos` (its first word at `firstWord`, after `reopen`), and where the next one starts. */
function nextChunk(plan: ChunkPlan, pos: number, firstWord: number, reopen: string) {
  const { text, limit, maxLines, spans, openerEnds } = plan;
  let budget = limit - reopen.length;
  if (firstWord - pos >= budget - 1) pos = firstWord; // indentation as long as a chunk is dropped
  if (maxLines !== undefined) {
    // Blank lines before the first word would only use up the line budget.
    pos = Math.max(pos, text.lastIndexOf("\n", firstWord - 1) + 1);
    // A reopened fence is one line, and a close may be needed: both come out of the line budget.
    const reserved = (reopen ? 1 : 0) + (spans.some((s) => s.repairable) ? 1 : 0);
    const end = lineBudgetEnd(text, pos, Math.max(1, maxLines - reserved));
    if (end !== undefined) budget = Math.min(budget, Math.max(1, end - pos));
  }
  let cut = findCut(text, pos, firstWord, budget, limit, openerEnds);
  let boundary = boundaryAt(text, spans, cut.end);
  while (reopen.length + cut.chunkEnd - pos + boundary.close.length > limit) {
    if (budget <= 2) {
      boundary = { close: "", reopen: "", next: skipSeparator(text, cut.end) };
      break;
    }
    budget = Math.max(2, Math.min(budget - 1, limit - reopen.length - boundary.close.length));
    cut = findCut(text, pos, firstWord, budget, limit, openerEnds);
    boundary = boundaryAt(text, spans, cut.end);
  }
  return { chunk: reopen + text.slice(pos, cut.chunkEnd) + boundary.close, boundary };
}
