import { mkdir, open } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../../logger.js";
import { readAt } from "./read-lines-backward.js";

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
): Promise<number> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const handle = await open(file, "a+", 0o600);
  try {
    const { size } = await handle.stat();
    let prefix = "";
    if (size === 0) prefix = `${headerLine()}\n`;
    else if ((await readAt(handle, size - 1, 1))[0] !== 0x0a) {
      logger.warn(
        { file, offset: size },
        "transcript did not end with a newline (torn line from a crash?); starting a new line",
      );
      prefix = "\n";
    }
    // O_APPEND: the write lands at the end whatever the handle's position.
    await handle.appendFile(`${prefix}${line}\n`, "utf8");
    return size + Buffer.byteLength(prefix, "utf8");
  } finally {
    await handle.close();
  }
}
