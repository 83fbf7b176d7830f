import { fileStamp } from "../../state/atomic-json-file.js";
import { access, rename } from "node:fs/promises";

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false; // missing (or unreadable, which rename would report anyway)
  }
}

/**
 * Renames `file` to `<file>.deleted.<ISO time with ':' and '.' as '-'>` (adding `-1`, `-2`, ... if that
 * name is taken): transcripts are archived, never deleted. Returns the new path, or undefined when
 * the file does not exist. The caller serializes this with appends to the same file.
 */
export async function archiveTranscript(file: string, nowMs: number): Promise<string | undefined> {
  const base = `${file}.deleted.${fileStamp(nowMs)}`;
  let target = base;
  for (let n = 1; await exists(target); n++) target = `${base}-${n}`;
  try {
    await rename(file, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  return target;
}
