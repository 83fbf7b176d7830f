import type { z } from "zod";
import { formatPath } from "../../config/format-issues.js";
import {
  TranscriptHeaderSchema,
  TranscriptMessageLineSchema,
  type TranscriptHeader,
  type TranscriptMessage,
} from "./transcript-event.js";

/** One transcript line, parsed. */
export type ParsedTranscriptLine =
  | { kind: "message"; message: TranscriptMessage }
  | { kind: "header"; header: TranscriptHeader }
  /** a blank line, or a well-formed event of a type we do not read (compaction, model change, ...) */
  | { kind: "other" }
  | { kind: "invalid"; reason: string };

/** `a.b: problem; c: problem` for the first few zod issues. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .slice(0, 3)
    .map((issue) => `${formatPath(issue.path)}: ${issue.message}`)
    .join("; ");
}

/** Parses one line of a transcript (without its newline). Never throws. */
export function parseTranscriptLine(text: string): ParsedTranscriptLine {
  if (text.trim() === "") return { kind: "other" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { kind: "invalid", reason: `not JSON: ${(err as Error).message}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { kind: "invalid", reason: "not a JSON object" };
  const type = (value as { type?: unknown }).type;
  if (type === "message") {
    const line = TranscriptMessageLineSchema.safeParse(value);
    return line.success
      ? { kind: "message", message: line.data.message }
      : { kind: "invalid", reason: describeIssues(line.error.issues) };
  }
  if (type === "session") {
    const header = TranscriptHeaderSchema.safeParse(value);
    return header.success
      ? { kind: "header", header: header.data }
      : { kind: "invalid", reason: describeIssues(header.error.issues) };
  }
  // Other event types are valid lines we have no use for here: skipped silently, kept on disk.
  return typeof type === "string" && type !== "" ? { kind: "other" } : { kind: "invalid", reason: 'no "type" field' };
}
