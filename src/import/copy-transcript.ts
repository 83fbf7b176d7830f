import { readFile, stat, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseTranscriptLine } from "../sessions/transcripts/index.js";
import { type ImportReport, isRecord } from "./import-report.js";

/** What copying one transcript found. */
export interface CopiedTranscript {
  messages: number;
  /** lines that are not valid transcript lines (kept in the copy; a reader skips them with a warning) */
  invalidLines: number;
}

/** A message line without the message's own `timestamp` (older Clawdbot files) gets the line's. */
function withMessageTime(line: string): string {
  const value = (() => {
    try {
      return JSON.parse(line) as unknown;
    } catch {
      return undefined;
    }
  })();
  if (!isRecord(value) || value.type !== "message" || !isRecord(value.message)) return line;
  if (typeof value.message.timestamp === "number") return line;
  const at = typeof value.timestamp === "string" ? Date.parse(value.timestamp) : Number.NaN;
  if (Number.isNaN(at)) return line;
  return JSON.stringify({ ...value, message: { ...value.message, timestamp: at } });
}

/** The lines to write (message times filled in), what they hold, and the first few unreadable ones. */
function readLines(text: string): { copied: CopiedTranscript; out: string[]; problems: string[] } {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const copied: CopiedTranscript = { messages: 0, invalidLines: 0 };
  const problems: string[] = [];
  const out = lines.map((raw, index) => {
    const line = withMessageTime(raw);
    const parsed = parseTranscriptLine(line);
    if (parsed.kind === "message") copied.messages++;
    if (parsed.kind === "invalid") {
      copied.invalidLines++;
      if (problems.length < 3) problems.push(`line ${index + 1}: ${parsed.reason}`);
    }
    return line;
  });
  return { copied, out, problems };
}

/**
 * Copies one JSONL transcript line by line (never over an existing file): messages keep their
 * content, tool calls and results as they are; lines Switchboard cannot read are kept and reported.
 */
export async function copyTranscript(
  from: string,
  to: string,
  report: ImportReport,
): Promise<CopiedTranscript | undefined> {
  const { copied, out, problems } = readLines(await readFile(from, "utf8"));
  try {
    await writeFile(to, out.length > 0 ? `${out.join("\n")}\n` : "", { flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    report.unmapped.push({
      where: from,
      reason: `${path.basename(to)} already exists in the target; kept the target's`,
    });
    return undefined;
  }
  // The copy keeps the source's modification time: retention counts an archive's age from it.
  const { atime, mtime } = await stat(from);
  await utimes(to, atime, mtime);
  if (copied.invalidLines > 0)
    report.unmapped.push({
      where: from,
      reason: `${copied.invalidLines} line(s) Switchboard cannot read (${problems.join("; ")}); copied as they are, skipped when read`,
    });
  return copied;
}
