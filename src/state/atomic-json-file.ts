import { randomUUID } from "node:crypto";
import { mkdir, open, readFile, readdir, rename, unlink } from "node:fs/promises";
import path from "node:path";
import type { Adapter } from "lowdb";
import { SwitchboardError } from "../errors.js";
import type { Logger } from "../logger.js";
import { processAlive } from "./process-alive.js";

/** A time as it appears in file names set aside: ISO with ':' and '.' as '-' (`2026-11-22T04-05-06-000Z`). */
export function fileStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[:.]/g, "-");
}

/** The file exists but does not hold a JSON object. */
export class CorruptFileError extends SwitchboardError {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super("STATE_CORRUPT", `${file} is not a valid JSON object: ${reason}`);
    this.name = "CorruptFileError";
  }
}

function rowText(key: string, value: unknown, cache?: WeakMap<object, string>): string {
  if (!cache || typeof value !== "object" || value === null)
    return `  ${JSON.stringify(key)}: ${JSON.stringify(value)}`;
  let text = cache.get(value);
  if (text === undefined) {
    text = `  ${JSON.stringify(key)}: ${JSON.stringify(value)}`;
    cache.set(value, text);
  }
  return text;
}

/**
 * One entry per line: readable, greppable, and as small as compact JSON. With a `cache`, a row
 * object that was serialized before is not serialized again (rows are replaced, never mutated).
 */
export function serializeRecord(data: Record<string, unknown>, cache?: WeakMap<object, string>): string {
  const rows = Object.entries(data).map(([key, value]) => rowText(key, value, cache));
  return rows.length ? `{\n${rows.join(",\n")}\n}\n` : "{}\n";
}

/** Rows serialized per write step: big enough to be cheap, small enough to keep the event loop moving. */
const ROWS_PER_CHUNK = 2_000;

/** {@link serializeRecord} in pieces of {@link ROWS_PER_CHUNK} rows, so a big file is written without one long block. */
function* serializeRecordChunks(data: Record<string, unknown>, cache?: WeakMap<object, string>): Generator<string> {
  const entries = Object.entries(data);
  if (entries.length === 0) {
    yield "{}\n";
    return;
  }
  for (let start = 0; start < entries.length; start += ROWS_PER_CHUNK) {
    const rows = entries.slice(start, start + ROWS_PER_CHUNK).map(([key, value]) => rowText(key, value, cache));
    const last = start + ROWS_PER_CHUNK >= entries.length;
    yield `${start === 0 ? "{\n" : ",\n"}${rows.join(",\n")}${last ? "\n}\n" : ""}`;
  }
}

async function parseRecord(text: string, file: string): Promise<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Hand-edited stores (comments, trailing commas) are still read; json5 is loaded for those only.
    try {
      value = (await import("json5")).default.parse(text);
    } catch (err) {
      throw new CorruptFileError(file, (err as Error).message);
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new CorruptFileError(file, `expected an object, found ${Array.isArray(value) ? "an array" : String(value)}`);
  }
  return value as Record<string, unknown>;
}

/** Writes `text` to `file` atomically: temp file in the same folder, fsync, rename. */
export async function writeFileAtomic(
  file: string,
  text: string | Iterable<string>,
  beforeRename?: () => Promise<void> | void,
): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  try {
    const handle = await open(temp, "w", 0o600);
    try {
      // Each piece is awaited on its own, so other work runs between the pieces of a big file.
      for (const piece of typeof text === "string" ? [text] : text) {
        const bytes = Buffer.from(piece, "utf8");
        for (let done = 0; done < bytes.length; ) done += (await handle.write(bytes, done)).bytesWritten;
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    await beforeRename?.();
    await rename(temp, file);
  } catch (err) {
    await unlink(temp).catch(() => undefined); // best effort: the temp file may not exist
    throw err;
  }
}

/**
 * A lowdb adapter for a JSON object file: reads JSON (or JSON5), refuses anything that is not an
 * object with {@link CorruptFileError}, and writes atomically so a crash never leaves half a file.
 */
export class AtomicJsonFile implements Adapter<Record<string, unknown>> {
  private readonly rowText = new WeakMap<object, string>();

  /** `beforeRename` runs once a write's temp file is complete and synced (crash tests stop there). */
  constructor(
    readonly file: string,
    private readonly beforeRename?: () => Promise<void> | void,
  ) {}

  async read(): Promise<Record<string, unknown> | null> {
    let text: string;
    try {
      // One decode of the whole buffer: much faster than decoding while reading for big files.
      text = (await readFile(this.file)).toString("utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
    return parseRecord(text, this.file);
  }

  async write(data: Record<string, unknown>): Promise<void> {
    await writeFileAtomic(this.file, serializeRecordChunks(data, this.rowText), this.beforeRename);
  }
}

/**
 * Removes `<file>.<pid>.<uuid>.tmp` files that a killed atomic write left behind (their process is
 * gone); returns the paths removed.
 */
export async function removeStaleTempFiles(file: string, logger: Logger): Promise<string[]> {
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.`;
  const names = await readdir(dir).catch(() => [] as string[]); // no folder yet: nothing to clean
  const removed: string[] = [];
  for (const name of names) {
    const match = name.startsWith(prefix) ? /^(\d+)\.[0-9a-f-]+\.tmp$/.exec(name.slice(prefix.length)) : null;
    // A live process (this one included) may still be writing it.
    if (!match || processAlive(Number(match[1]))) continue;
    const stale = path.join(dir, name);
    await unlink(stale).then(
      () => removed.push(stale),
      (err: unknown) => logger.warn({ file: stale, err }, "could not remove a stale temp file"),
    );
  }
  if (removed.length) logger.info({ file, removed }, "removed temp files a killed write left behind");
  return removed;
}
