import { closeSync, fstatSync, open as openCallback, readSync, writeSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import type { Logger } from "../../logger.js";

const openFd = promisify(openCallback);

/** Append handles kept open by default; the least recently used one is closed past this. */
const DEFAULT_MAX_OPEN = 256;

/** A file kept open for appends, and its size after our last whole line. */
interface OpenFile {
  fd: number;
  size: number;
  /** the file ends with a torn line: the next append starts with a newline */
  torn: boolean;
}

/**
 * Appends whole lines to files, keeping the most recently used files open (O_APPEND) so a line is
 * one `write`. What it learned about a file holds while only it writes there: the size after its
 * last line (so no `fstat` per line, and no check for a torn last line) and that the folder exists.
 * The first append to a file this process has not written yet (after a start, a crash or an
 * eviction whose size no longer matches) checks the file's last byte. The caller serializes calls
 * per file, including {@link Appender.forget}.
 *
 * Opening (which may create the file: the costly part, in the kernel) runs on the thread pool. A
 * line is then one synchronous `write` of a few hundred bytes into the page cache, as a logger's
 * file destination does; `fstat` and `close` are synchronous too. Each would otherwise cost the
 * event loop a promise and a thread-pool round trip several times its own few microseconds.
 */
export interface Appender {
  /**
   * Appends `line` and a newline to `file` in one write, creating folder and file (private to the
   * user) with `headerLine()` first when the file is new or empty. When the file does not end with a
   * newline (a line torn by a crash), a newline goes first so the new line stays whole. Returns the
   * byte offset where `line` starts.
   */
  append(file: string, line: string, headerLine: () => string): Promise<number>;
  /** Closes `file`'s handle and forgets its size: call it before the file is renamed or rewritten. */
  forget(file: string): Promise<void>;
  /** The files open now: those kept between appends (least recently used first), then those being written. */
  openFiles(): string[];
}

/** Creates an {@link Appender}; `maxOpen` bounds the handles kept open between appends. */
export function createAppender(deps: { logger: Logger; maxOpen?: number }): Appender {
  const { logger, maxOpen = DEFAULT_MAX_OPEN } = deps;
  const folders = new Map<string, Promise<void>>(); // folders made (or being made)
  const files = new Map<string, OpenFile>(); // idle handles, least recently used first
  const sizes = new Map<string, number>(); // sizes of files closed by eviction
  const busy = new Set<string>(); // files an append is writing to now

  function closeNow(file: string, fd: number): void {
    try {
      closeSync(fd);
    } catch (err) {
      logger.warn({ file, err }, "closing a transcript file failed");
    }
  }

  /** Closes the least recently used idle handles past `maxOpen`. */
  function evict(): void {
    for (const [file, entry] of files) {
      if (files.size <= maxOpen) break;
      files.delete(file);
      sizes.set(file, entry.size);
      closeNow(file, entry.fd);
    }
  }

  async function openFile(file: string): Promise<OpenFile> {
    const folder = path.dirname(file);
    let made = folders.get(folder);
    if (!made) {
      // Appends to many new files at once share one mkdir; a failed one is tried again next time.
      made = mkdir(folder, { recursive: true, mode: 0o700 }).then(() => undefined);
      folders.set(folder, made);
      made.catch(() => folders.delete(folder));
    }
    await made;
    const fd = await openFd(file, "a+", 0o600).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== "ENOENT") throw err;
      // The folder went away since we made it: make it again.
      await mkdir(folder, { recursive: true, mode: 0o700 });
      return openFd(file, "a+", 0o600);
    });
    try {
      const { size } = fstatSync(fd);
      const known = sizes.get(file);
      sizes.delete(file);
      if (size > 0 && known !== size && lastByte(fd, size) !== 0x0a) {
        logger.warn(
          { file, offset: size },
          "transcript did not end with a newline (torn line from a crash?); starting a new line",
        );
        return { fd, size, torn: true };
      }
      return { fd, size, torn: false };
    } catch (err) {
      closeNow(file, fd);
      throw err;
    }
  }

  return {
    async append(file, line, headerLine) {
      // While in use the handle is out of the idle list, so eviction never closes it under a write.
      busy.add(file);
      let entry = files.get(file);
      if (entry) files.delete(file);
      else
        entry = await openFile(file).catch((err: unknown) => {
          busy.delete(file);
          throw err;
        });
      let offset: number;
      try {
        const prefix = entry.size === 0 ? `${headerLine()}\n` : entry.torn ? "\n" : "";
        const bytes = Buffer.from(`${prefix}${line}\n`, "utf8");
        offset = entry.size + Buffer.byteLength(prefix, "utf8");
        writeAll(entry.fd, bytes);
        entry.size += bytes.length;
        entry.torn = false;
      } catch (err) {
        // Part of the line may be on disk: the next append reopens the file and checks its last byte.
        closeNow(file, entry.fd);
        throw err;
      } finally {
        busy.delete(file);
      }
      files.set(file, entry);
      evict();
      return offset;
    },
    async forget(file) {
      sizes.delete(file);
      const entry = files.get(file);
      if (!entry) return;
      files.delete(file);
      closeNow(file, entry.fd);
    },
    openFiles: () => [...files.keys(), ...busy],
  };
}

/** Writes every byte of `bytes`; O_APPEND puts them at the end of the file whatever the position. */
function writeAll(fd: number, bytes: Buffer): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
}

/** The byte at `size - 1`. */
function lastByte(fd: number, size: number): number | undefined {
  const byte = Buffer.alloc(1);
  return readSync(fd, byte, 0, 1, size - 1) === 1 ? byte[0] : undefined;
}
