// The one read of a session list that a database can answer too: the image's store filters its
// rows in memory (./session-store.ts), a standby asks PostgreSQL (./postgres-session-select.ts).
// Both return the same rows in the same order, so a handler reads either one way.
import type { ParsedSessionKey, SessionKind } from "../routing/session-key.js";
import type { SessionEntry } from "./session-entry.js";

/** One session as listed: its key, parsed, and its row. */
export interface SessionRow {
  key: string;
  parsed: ParsedSessionKey;
  entry: SessionEntry;
}

/** Which sessions a select returns; every filter applies before the limit. */
export interface SessionFilter {
  kinds?: readonly SessionKind[];
  /** only sessions with a turn in the last N minutes */
  activeMinutes?: number;
  /** only sessions spawned by this (canonical) key */
  spawnedBy?: string;
  label?: string;
  sessionId?: string;
  /** at most this many rows, counted after `keep` */
  limit?: number;
}

/** The sessions matching `filter` and `keep`, newest turn first (ties in stored order), at most `filter.limit`. */
export type SelectSessions = (filter: SessionFilter, keep?: (row: SessionRow) => boolean) => Promise<SessionRow[]>;

/** Whether `entry` has the fields `filter` asks for (spawnedBy, label, sessionId). */
export function hasFields(entry: SessionEntry, filter: SessionFilter): boolean {
  return (
    (filter.spawnedBy === undefined || entry.spawnedBy === filter.spawnedBy) &&
    (filter.label === undefined || entry.label === filter.label) &&
    (filter.sessionId === undefined || entry.sessionId === filter.sessionId)
  );
}

/** The rows `keep` accepts, in order, at most `limit`. */
export function keepUpTo(
  rows: Iterable<SessionRow>,
  keep: (row: SessionRow) => boolean,
  limit = Infinity,
): SessionRow[] {
  const kept: SessionRow[] = [];
  for (const row of rows) {
    if (kept.length >= limit) break;
    if (keep(row)) kept.push(row);
  }
  return kept;
}
