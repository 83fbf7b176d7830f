import { readFile } from "node:fs/promises";
import path from "node:path";

/** The workspace files the system prompt carries, in this order. */
const PROMPT_FILES = ["AGENTS.md", "USER.md", "MEMORY.md"] as const;

/** One workspace file as the prompt carries it. */
export interface PromptFile {
  name: string;
  text: string;
  /** characters of the file on disk */
  originalChars: number;
  truncated: boolean;
}

/** The marker that ends a file the prompt cut. */
export const TRUNCATION_MARKER = (kept: number, total: number) =>
  `[… truncated: ${kept} of ${total} characters shown; read the file for the rest]`;

/** Cuts `text` to `maxChars`, marking the cut. */
export function capFile(name: string, text: string, maxChars: number): PromptFile {
  if (text.length <= maxChars) return { name, text, originalChars: text.length, truncated: false };
  return {
    name,
    text: `${text.slice(0, maxChars)}\n${TRUNCATION_MARKER(maxChars, text.length)}`,
    originalChars: text.length,
    truncated: true,
  };
}

/** Reads the prompt files of a workspace (missing or empty ones are left out), each capped. */
export async function readPromptFiles(dir: string | undefined, maxChars: number): Promise<PromptFile[]> {
  if (!dir) return [];
  const files: PromptFile[] = [];
  for (const name of PROMPT_FILES) {
    // A missing file is simply not part of the prompt.
    const text = await readFile(path.join(dir, name), "utf8").catch(() => "");
    if (text.trim()) files.push(capFile(name, text.trim(), maxChars));
  }
  return files;
}
