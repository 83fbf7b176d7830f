import { statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Workspace } from "../../workspace/workspace-port.js";

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
export type PromptFileReader = (workspace: Workspace | undefined, maxChars: number) => Promise<PromptFile[]>;

/** The prompt files among `texts` (in {@link PROMPT_FILES} order; empty ones left out), each capped. */
function promptFilesOf(texts: readonly string[], maxChars: number): PromptFile[] {
  const files: PromptFile[] = [];
  PROMPT_FILES.forEach((name, i) => {
    if (texts[i]) files.push(capFile(name, texts[i]!, maxChars));
  });
  return files;
}

/** The text of one prompt file, trimmed; "" when missing or unreadable (it is then not part of the prompt). */
const textIn = (workspace: Workspace, name: string): Promise<string> =>
  workspace.folder
    ? readFile(path.join(workspace.folder, name), "utf8").then(
        (text) => text.trim(),
        () => "",
      )
    : workspace.read(name).then((text) => text?.trim() ?? "");

/** Reads the prompt files of a workspace (missing or empty ones are left out), each capped. */
export const readPromptFiles: PromptFileReader = async (workspace, maxChars) => {
  if (!workspace) return [];
  // Side by side: on PostgreSQL reads asked for together share one statement (postgres-workspace.ts).
  const texts = await Promise.all(PROMPT_FILES.map((name) => textIn(workspace, name)));
  return promptFilesOf(texts, maxChars);
};

/**
 * What identifies one version of a file: size, inode, modification and change time. A `stat` is a
 * few microseconds in the kernel, so it runs here rather than as a thread-pool round trip per file
 * per turn.
 */
function versionOf(file: string): string | undefined {
  try {
    const info = statSync(file, { throwIfNoEntry: false });
    return info && `${info.size}:${info.ino}:${info.mtimeMs}:${info.ctimeMs}`;
  } catch {
    return undefined; // unreadable: not part of the prompt
  }
}

/**
 * `check` run at most once at a time: a caller that comes while a check runs gets the next one,
 * which starts when the running one ends and serves everyone who came meanwhile. So every caller
 * gets a check that started after it called, and a burst of callers shares a few checks.
 */
function oneAtATime<T>(check: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  let next: Promise<T> | undefined;
  const start = (): Promise<T> => {
    const run = check().finally(() => {
      if (running === run) running = undefined;
    });
    running = run;
    return run;
  };
  return () => {
    if (!running) return start();
    next ??= running
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return start();
      });
    return next;
  };
}

/**
 * A {@link PromptFileReader} that keeps each file's text between turns: a call checks each file
 * with one `stat` (size, inode, modification and change time) and reads only a file that changed,
 * so an edit saved before a turn starts is in that turn's prompt, as with reading every time.
 * Turns that start while a check runs share the next one.
 */
export function createPromptFileReader(): PromptFileReader {
  const kept = new Map<string, { version: string; text: string }>(); // by absolute path
  const checks = new Map<string, () => Promise<string[]>>(); // by workspace

  async function textOf(file: string): Promise<string> {
    const version = versionOf(file);
    if (version === undefined) {
      kept.delete(file);
      return "";
    }
    const known = kept.get(file);
    if (known?.version === version) return known.text;
    // Read after the stat: a change in between makes the next stat differ, and the file is read again.
    const text = (await readFile(file, "utf8").catch(() => "")).trim();
    kept.set(file, { version, text });
    return text;
  }

  return async (workspace, maxChars) => {
    // Rows have no cheap version check: they are read every turn (one statement for the three).
    if (!workspace?.folder) return readPromptFiles(workspace, maxChars);
    const dir = workspace.folder;
    let check = checks.get(dir);
    if (!check) {
      check = oneAtATime(() => Promise.all(PROMPT_FILES.map((name) => textOf(path.join(dir, name)))));
      checks.set(dir, check);
    }
    return promptFilesOf(await check(), maxChars);
  };
}
