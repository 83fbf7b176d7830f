import { open, readdir, unlink } from "node:fs/promises";
import path from "node:path";

/** `<file>.journal.<n>`: the n-th journal segment of a record file (n padded so names sort). */
export function segmentPath(file: string, number: number): string {
  return `${file}.journal.${String(number).padStart(8, "0")}`;
}

/** Deletes the n-th journal segment of `file` (a segment already gone is fine). */
export async function removeSegment(file: string, number: number): Promise<void> {
  await unlink(segmentPath(file, number)).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== "ENOENT") throw err;
  });
}

/** The journal segments of `file` on disk, oldest first. */
export async function listSegments(file: string): Promise<Array<{ number: number; path: string }>> {
  const prefix = `${path.basename(file)}.journal.`;
  const names = await readdir(path.dirname(file)).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return [] as string[];
    throw err;
  });
  return names
    .filter((name) => name.startsWith(prefix) && /^\d+$/.test(name.slice(prefix.length)))
    .map((name) => ({ number: Number(name.slice(prefix.length)), path: path.join(path.dirname(file), name) }))
    .sort((a, b) => a.number - b.number);
}

/** Makes renames and new files in `file`'s folder durable (a no-op where folders cannot be synced). */
export async function syncFolder(file: string): Promise<void> {
  const handle = await open(path.dirname(file), "r").catch(() => undefined); // e.g. Windows: nothing to sync
  if (!handle) return;
  try {
    await handle.sync();
  } catch {
    // Some filesystems refuse fsync on a folder; the rename itself has still happened.
  } finally {
    await handle.close();
  }
}

/** One change read back from a journal line: a row's full after-image, or its deletion. */
type JournalChange = { seq: number; key: string; value: unknown } | { seq: number; key: string; deleted: true };

/** Serializes a change as one journal line (no newline). */
export function journalLine(seq: number, key: string, value: unknown): string {
  return value === undefined
    ? JSON.stringify({ s: seq, k: key, d: 1 })
    : `{"s":${seq},"k":${JSON.stringify(key)},"v":${JSON.stringify(value)}}`;
}

/** Parses one journal line, or returns undefined when it is not a whole, well-formed change. */
function parseJournalLine(line: string): JournalChange | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const { s, k, v, d } = parsed as { s?: unknown; k?: unknown; v?: unknown; d?: unknown };
  if (typeof s !== "number" || !Number.isSafeInteger(s) || typeof k !== "string") return undefined;
  if (d === 1) return { seq: s, key: k, deleted: true };
  if (v === undefined) return undefined;
  return { seq: s, key: k, value: v };
}

/** What reading one segment found. */
export interface SegmentContent {
  changes: JournalChange[];
  /** byte length of the whole lines; anything after it is a torn last line */
  wholeBytes: number;
  /** bytes of a last line without its newline (never acknowledged) */
  tornBytes: number;
  /** 1-based numbers of lines that are complete but unreadable (corruption) */
  badLines: number[];
}

/**
 * A segment's whole (newline-ended) lines, numbered from 1, without the empty ones; what follows
 * the last newline is a torn line, never acknowledged.
 */
function wholeLines(buffer: Buffer): {
  lines: Array<{ lineNo: number; line: string }>;
  wholeBytes: number;
  tornBytes: number;
} {
  const end = buffer.lastIndexOf(0x0a) + 1;
  const lines = buffer
    .toString("utf8", 0, end)
    .split("\n")
    .map((line, i) => ({ lineNo: i + 1, line }))
    .filter(({ line }) => line !== "");
  return { lines, wholeBytes: end, tornBytes: buffer.length - end };
}

/** Splits a segment's bytes into changes, a torn tail, and unreadable whole lines. */
export function parseSegment(buffer: Buffer): SegmentContent {
  const { lines, wholeBytes, tornBytes } = wholeLines(buffer);
  const changes: JournalChange[] = [];
  const badLines: number[] = [];
  for (const { lineNo, line } of lines) {
    const change = parseJournalLine(line);
    if (change) changes.push(change);
    else badLines.push(lineNo);
  }
  return { changes, wholeBytes, tornBytes, badLines };
}

/** One change in the shared journal: a row of table `table`. */
export type SharedChange =
  | { seq: number; table: string; key: string; value: unknown }
  | { seq: number; table: string; key: string; deleted: true };

/** A change to write to the shared journal (`value` undefined: the row is deleted). */
export interface TableWrite {
  table: string;
  key: string;
  value: unknown;
}

/** The first line of every shared journal segment: which journal it belongs to. */
export const sharedHeaderLine = (id: string) => JSON.stringify({ journal: id });

function changeFields(write: TableWrite): string {
  return write.value === undefined
    ? `"t":${JSON.stringify(write.table)},"k":${JSON.stringify(write.key)},"d":1`
    : `"t":${JSON.stringify(write.table)},"k":${JSON.stringify(write.key)},"v":${JSON.stringify(write.value)}`;
}

/**
 * Serializes changes sharing sequence number `seq` as one shared-journal line (no newline): one
 * change as `{"s":..,"t":..,"k":..,"v":..}`, several (a commit) as `{"s":..,"c":[...]}`, so a
 * commit is on disk whole or, as a torn last line, not at all.
 */
export function sharedLine(seq: number, writes: readonly TableWrite[]): string {
  if (writes.length === 1) return `{"s":${seq},${changeFields(writes[0]!)}}`;
  return `{"s":${seq},"c":[${writes.map((write) => `{${changeFields(write)}}`).join(",")}]}`;
}

function parseSharedChange(seq: number, raw: unknown): SharedChange | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const { t, k, v, d } = raw as { t?: unknown; k?: unknown; v?: unknown; d?: unknown };
  if (typeof t !== "string" || typeof k !== "string") return undefined;
  if (d === 1) return { seq, table: t, key: k, deleted: true };
  if (v === undefined) return undefined;
  return { seq, table: t, key: k, value: v };
}

/** What reading one shared segment found. */
export interface SharedSegmentContent {
  /** the journal's id from the header line, when present */
  id?: string;
  changes: SharedChange[];
  wholeBytes: number;
  tornBytes: number;
  badLines: number[];
}

/** Splits a shared segment's bytes into its header, changes, a torn tail, and unreadable whole lines. */
export function parseSharedSegment(buffer: Buffer): SharedSegmentContent {
  const { lines, wholeBytes, tornBytes } = wholeLines(buffer);
  const content: SharedSegmentContent = { changes: [], wholeBytes, tornBytes, badLines: [] };
  for (const { lineNo, line } of lines) {
    let parsed: { s?: unknown; c?: unknown; journal?: unknown } | null;
    try {
      parsed = JSON.parse(line);
    } catch {
      content.badLines.push(lineNo);
      continue;
    }
    if (lineNo === 1 && typeof parsed?.journal === "string") {
      content.id = parsed.journal;
      continue;
    }
    const seq = parsed?.s;
    if (typeof seq !== "number" || !Number.isSafeInteger(seq)) {
      content.badLines.push(lineNo);
      continue;
    }
    const raws = Array.isArray(parsed!.c) ? (parsed!.c as unknown[]) : [parsed];
    const changes = raws.map((raw) => parseSharedChange(seq, raw));
    if (changes.length === 0 || changes.some((change) => change === undefined)) content.badLines.push(lineNo);
    else content.changes.push(...(changes as SharedChange[]));
  }
  return content;
}
