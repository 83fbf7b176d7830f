import { access, readdir, rename, stat } from "node:fs/promises";
import path from "node:path";
import { fileStamp } from "../../state/atomic-json-file.js";
import { parseTranscriptFileName } from "./transcript-path.js";
import type { TranscriptListing } from "./transcripts-port.js";

/** A set-aside transcript file: `<name>.jsonl.deleted.<stamp>` (ours) or `.reset.` (imported homes). */
const SET_ASIDE = /\.jsonl\.(deleted|reset)\.(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})-(\d{3})Z/;

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

/** When a set-aside name says it was set aside, else undefined. */
function setAsideAt(name: string): number | undefined {
  const m = SET_ASIDE.exec(name);
  return m ? Date.parse(`${m[2]}T${m[3]}:${m[4]}:${m[5]}.${m[6]}Z`) : undefined;
}

/** The listing of transcript file `file` (its id: the name without `.jsonl`), or undefined when missing. */
export async function statTranscript(file: string): Promise<TranscriptListing | undefined> {
  try {
    const info = await stat(file);
    return { id: path.basename(file, ".jsonl"), bytes: info.size, updatedAt: info.mtimeMs };
  } catch {
    return undefined; // gone meanwhile (or unreadable)
  }
}

/** Every transcript (`<id>.jsonl`) and set-aside transcript in `dir`; other files are not listed. */
export async function listTranscripts(dir: string): Promise<TranscriptListing[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const listed: TranscriptListing[] = [];
  for (const name of names) {
    const archived = SET_ASIDE.test(name);
    if (!archived && !parseTranscriptFileName(name)) continue;
    const info = await statTranscript(path.join(dir, name));
    if (!info) continue;
    const at = setAsideAt(name);
    if (archived) listed.push({ ...info, id: name, archivedAt: at ?? info.updatedAt });
    else listed.push(info);
  }
  return listed;
}
