import { readFile } from "node:fs/promises";
import path from "node:path";
import JSON5 from "json5";
import type { KeyContext } from "../routing/parse-session-key.js";
import { migrateStore } from "../sessions/migrate-store.js";
import { type SessionEntry, SessionEntrySchema } from "../sessions/session-entry.js";
import type { SessionStore } from "../sessions/session-store.js";
import { parseTranscriptFileName } from "../sessions/transcripts/index.js";
import { type ImportReport, isRecord } from "./import-report.js";

/** A Clawdbot `sessions.json` (JSON5), or undefined when it is missing or corrupt (reported). */
export async function readSourceStore(
  file: string,
  report: ImportReport,
): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  try {
    const value: unknown = JSON5.parse(text);
    if (isRecord(value)) return value;
    report.unmapped.push({
      where: file,
      reason: "not a JSON object of sessions; its sessions were not imported (transcripts were)",
    });
  } catch (err) {
    report.unmapped.push({
      where: file,
      reason: `corrupt (${(err as Error).message}); its sessions were not imported (transcripts were)`,
    });
  }
  return undefined;
}

/** A row as Switchboard stores it, or the reason it cannot be; fields our schema refuses are dropped and noted. */
function checkedRow(key: string, row: unknown, where: string, report: ImportReport): SessionEntry | undefined {
  if (!isRecord(row)) return void report.unmapped.push({ where: `${where} ${key}`, reason: "not an object" });
  const copy: Record<string, unknown> = { ...row };
  // Clawdbot records the transcript as an absolute path on its own machine: the file name is what matters here.
  if (typeof copy.sessionFile === "string") {
    const name = path.basename(copy.sessionFile);
    if (parseTranscriptFileName(name)) copy.sessionFile = name;
    else delete copy.sessionFile;
  }
  for (let round = 0; round < 5; round++) {
    const parsed = SessionEntrySchema.safeParse(copy);
    if (parsed.success) return parsed.data;
    const fields = [...new Set(parsed.error.issues.map((issue) => String(issue.path[0] ?? "")))];
    const required = fields.filter((f) => f === "sessionId" || f === "updatedAt" || f === "");
    if (required.length > 0) {
      report.unmapped.push({
        where: `${where} ${key}`,
        reason: `no valid ${required.join(", ") || "row"}; session not imported`,
      });
      return undefined;
    }
    for (const field of fields) {
      report.notes.push({
        where: `${where} ${key}.${field}`,
        reason: `dropped: ${JSON.stringify(copy[field])} is not a valid ${field}`,
      });
      delete copy[field];
    }
  }
  return undefined;
}

/**
 * Writes a source store's rows into `store`: legacy keys and field names migrated (`main`,
 * `group:<id>`, `provider` -> `channel`, ...), one row per canonical key (the newer wins, the other
 * is reported), rows the target already has are kept as they are (reported). Returns the keys written.
 */
export async function importRows(
  raw: Record<string, unknown>,
  store: SessionStore,
  keys: KeyContext,
  where: string,
  report: ImportReport,
): Promise<string[]> {
  const migration = migrateStore(raw, keys);
  for (const { from, to } of migration.renamed)
    report.notes.push({ where: `${where} ${from}`, reason: `legacy key, imported as ${to}` });
  for (const c of migration.collisions)
    report.unmapped.push({
      where: `${where} ${c.droppedFrom}`,
      reason: `same session as ${c.keptFrom} (${c.key}); the newer row was imported`,
    });
  const written: string[] = [];
  const writes: Promise<void>[] = [];
  for (const [key, row] of Object.entries(migration.data)) {
    const entry = checkedRow(key, row, where, report);
    if (!entry) continue;
    let existing: SessionEntry | undefined;
    try {
      existing = store.get(key);
    } catch (err) {
      report.unmapped.push({ where: `${where} ${key}`, reason: `${(err as Error).message}; session not imported` });
      continue;
    }
    if (existing) {
      report.unmapped.push({
        where: `${where} ${key}`,
        reason: "the target already has this session; kept the target's",
      });
      continue;
    }
    writes.push(store.patchNow(key, () => entry).written);
    written.push(key);
  }
  await Promise.all(writes);
  return written;
}
