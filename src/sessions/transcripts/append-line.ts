import { mkdir, open } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../../logger.js";
import { readAt } from "./read-lines-backward.js";

/**
 * What earlier appends of this process learned, so the next append skips work: folders that
 * exist, and the size each file had after our last whole line (a file still that size ends with
 * a newline). Anything else (another writer, a truncation) takes the full check.
 */
export interface AppendMemory {
  folders: Set<string>;
  sizes: Map<string, number>;
}

/** An empty {@link AppendMemory}. */
export const createAppendMemory = (): AppendMemory => ({ folders: new Set(), sizes: new Map() });

/**
 * Appends `line` and a newline to `file` in one write, creating folder and file (private to the
 * user) with `headerLine()` first when the file is new or empty. When the file does not end with a
 * newline (a line torn by a crash), a newline goes first so the new line stays whole. The caller
 * serializes calls per file. Returns the byte offset where `line` starts.
 */
export async function appendLine(
  file: string,
  line: string,
  headerLine: () => string,
  logger: Logger,
  memory: AppendMemory = createAppendMemory(),
): Promise<number> {
  const folder = path.dirname(file);
  if (!memory.folders.has(folder)) {
    await mkdir(folder, { recursive: true, mode: 0o700 });
    memory.folders.add(folder);
  }
  const handle = await open(file, "a+", 0o600).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== "ENOENT") throw err;
    // The folder went away since we made it: make it again.
    await mkdir(folder, { recursive: true, mode: 0o700 });
    return open(file, "a+", 0o600);
  });
  try {
    const { size } = await handle.stat();
    let prefix = "";
    if (size === 0) prefix = `${headerLine()}\n`;
    else if (memory.sizes.get(file) !== size && (await readAt(handle, size - 1, 1))[0] !== 0x0a) {
      logger.warn(
        { file, offset: size },
        "transcript did not end with a newline (torn line from a crash?); starting a new line",
      );
      prefix = "\n";
    }
    const text = `${prefix}${line}\n`;
    memory.sizes.delete(file);
    // O_APPEND: the write lands at the end whatever the handle's position.
    await handle.appendFile(text, "utf8");
    memory.sizes.set(file, size + Buffer.byteLength(text, "utf8"));
    return size + Buffer.byteLength(prefix, "utf8");
  } finally {
    await handle.close();
  }
}
