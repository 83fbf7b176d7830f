import { randomUUID } from "node:crypto";
import { mkdir, open, readFile, readdir, rename, unlink } from "node:fs/promises";
import path from "node:path";
import JSON5 from "json5";
import { type Adapter, Low } from "lowdb";
import type { Logger } from "../logger.js";

/** A time as it appears in file names set aside: ISO with ':' and '.' as '-' (`2026-11-22T04-05-06-000Z`). */
export function fileStamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[:.]/g, "-");
}

/** The file exists but does not hold a JSON object. */
export class CorruptFileError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`${file} is not a valid JSON object: ${reason}`);
    this.name = "CorruptFileError";
  }
}

/**
 * One entry per line: readable, greppable, and as small as compact JSON. With a `cache`, a row
 * object that was serialized before is not serialized again (rows are replaced, never mutated).
 */
export function serializeRecord(data: Record<string, unknown>, cache?: WeakMap<object, string>): string {
  const rows = Object.entries(data).map(([key, value]) => {
    if (!cache || typeof value !== "object" || value === null)
      return `  ${JSON.stringify(key)}: ${JSON.stringify(value)}`;
    let text = cache.get(value);
    if (text === undefined) {
      text = `  ${JSON.stringify(key)}: ${JSON.stringify(value)}`;
      cache.set(value, text);
    }
    return text;
  });
  return rows.length ? `{\n${rows.join(",\n")}\n}\n` : "{}\n";
}

function parseRecord(text: string, file: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Hand-edited stores (comments, trailing commas) are still read.
    try {
      value = JSON5.parse(text);
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
export async function writeFileAtomic(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  try {
    const handle = await open(temp, "w", 0o600);
    try {
      await handle.writeFile(text, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
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

  constructor(readonly file: string) {}

  async read(): Promise<Record<string, unknown> | null> {
    let text: string;
    try {
      text = await readFile(this.file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
    return parseRecord(text, this.file);
  }

  async write(data: Record<string, unknown>): Promise<void> {
    await writeFileAtomic(this.file, serializeRecord(data, this.rowText));
  }
}

/** A JSON object file opened through lowdb, and where a corrupt predecessor was moved. */
export interface OpenedJsonRecord {
  db: Low<Record<string, unknown>>;
  corruptMovedTo?: string;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes `<file>.<pid>.<uuid>.tmp` files that a killed atomic write left behind (their process is
 * gone); returns the paths removed.
 */
async function removeStaleTempFiles(file: string, logger: Logger): Promise<string[]> {
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

/**
 * Opens `file` as a lowdb object store. A file that fails to parse is renamed to
 * `<file>.corrupt-<time>`, logged as an error, and the store starts empty: never overwritten.
 */
export async function openJsonRecord(
  file: string,
  deps: { logger: Logger; now?: () => number; what: string },
): Promise<OpenedJsonRecord> {
  await removeStaleTempFiles(file, deps.logger);
  const db = new Low<Record<string, unknown>>(new AtomicJsonFile(file), {});
  try {
    await db.read();
    return { db };
  } catch (err) {
    if (!(err instanceof CorruptFileError)) throw err;
    const corruptMovedTo = `${file}.corrupt-${fileStamp((deps.now ?? Date.now)())}`;
    await rename(file, corruptMovedTo);
    deps.logger.error(
      { file, movedTo: corruptMovedTo, err: err.message },
      `${deps.what} is corrupt; moved aside, starting empty`,
    );
    db.data = {};
    return { db, corruptMovedTo };
  }
}
