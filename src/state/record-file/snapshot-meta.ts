import { readFile, stat } from "node:fs/promises";
import { writeFileAtomic } from "../atomic-json-file.js";

/**
 * The sidecar `<file>.meta` the store writes after each snapshot: the last journal sequence number
 * the snapshot holds, and the size and mtime the snapshot had, so a file the store wrote itself is
 * recognised (and a hand-edited one is not).
 */
export interface SnapshotMeta {
  format: 1;
  /** every change up to this sequence number is in the snapshot */
  seq: number;
  size: number;
  mtimeMs: number;
  /** keys of rows that failed their check and are kept in the file as they were */
  invalid: string[];
  /** the shared journal `seq` counts in (absent: the file's own journal) */
  journal?: string;
}

/** The sidecar path of a record file. */
const metaPath = (file: string) => `${file}.meta`;

/** Reads the sidecar; undefined when missing or unreadable (then the snapshot takes the full path). */
export async function readSnapshotMeta(file: string): Promise<SnapshotMeta | undefined> {
  try {
    const meta = JSON.parse(await readFile(metaPath(file), "utf8")) as Partial<SnapshotMeta>;
    if (meta.format !== 1 || !Number.isSafeInteger(meta.seq)) return undefined;
    if (typeof meta.size !== "number" || typeof meta.mtimeMs !== "number") return undefined;
    if (!Array.isArray(meta.invalid) || !meta.invalid.every((key) => typeof key === "string")) return undefined;
    if (meta.journal !== undefined && typeof meta.journal !== "string") return undefined;
    return meta as SnapshotMeta;
  } catch {
    return undefined; // missing or hand-damaged sidecar: the snapshot is read and checked in full
  }
}

/** True when the snapshot on disk is byte for byte the one the sidecar describes. */
export async function snapshotMatches(file: string, meta: SnapshotMeta | undefined): Promise<boolean> {
  if (!meta) return false;
  const info = await stat(file).catch(() => undefined); // no snapshot: nothing to trust
  return info !== undefined && info.size === meta.size && info.mtimeMs === meta.mtimeMs;
}

/** Records that the snapshot now on disk holds every change up to `seq`. */
export async function writeSnapshotMeta(
  file: string,
  seq: number,
  invalid: string[],
  journal?: string,
): Promise<SnapshotMeta> {
  const info = await stat(file);
  const meta: SnapshotMeta = {
    format: 1,
    seq,
    size: info.size,
    mtimeMs: info.mtimeMs,
    invalid,
    ...(journal !== undefined && { journal }),
  };
  await writeFileAtomic(metaPath(file), `${JSON.stringify(meta)}\n`);
  return meta;
}
