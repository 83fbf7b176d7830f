import { type KeyContext, canonicalizeSessionKey } from "../routing/parse-session-key.js";

/** Two stored rows that became one key: the newer `updatedAt` is kept. */
export interface KeyCollision {
  key: string;
  keptFrom: string;
  droppedFrom: string;
  dropped: unknown;
}

/** What {@link migrateStore} changed. */
export interface StoreMigration {
  data: Record<string, unknown>;
  changed: boolean;
  renamed: Array<{ from: string; to: string }>;
  collisions: KeyCollision[];
}

const LEGACY_FIELDS: ReadonlyArray<[legacy: string, current: string]> = [
  ["provider", "channel"],
  ["lastProvider", "lastChannel"],
  ["room", "groupChannel"],
];

function renameLegacyFields(row: Record<string, unknown>): boolean {
  let changed = false;
  for (const [legacy, current] of LEGACY_FIELDS) {
    if (!(legacy in row)) continue;
    if (row[current] === undefined) row[current] = row[legacy];
    delete row[legacy];
    changed = true;
  }
  return changed;
}

function updatedAtOf(row: unknown): number {
  const value = (row as { updatedAt?: unknown } | null)?.updatedAt;
  return typeof value === "number" && Number.isFinite(value) ? value : -Infinity;
}

/**
 * Rewrites legacy and non-canonical keys to canonical ones (docs/session-keys.md) and renames
 * legacy fields. When two rows collapse into one key the newer `updatedAt` wins (ties: the row
 * that already had the canonical key); the loser is returned so the caller can log it.
 * Rows that are not objects are kept under their key untouched.
 */
export function migrateStore(raw: Record<string, unknown>, ctx: KeyContext): StoreMigration {
  const data: Record<string, unknown> = {};
  const result: StoreMigration = { data, changed: false, renamed: [], collisions: [] };
  const origin = new Map<string, string>();
  for (const [key, value] of Object.entries(raw)) {
    const isRow = typeof value === "object" && value !== null && !Array.isArray(value);
    const row = isRow ? { ...(value as Record<string, unknown>) } : value;
    if (isRow && renameLegacyFields(row as Record<string, unknown>)) result.changed = true;
    const canonical = isRow ? (canonicalizeSessionKey(key, ctx) ?? key) : key;
    if (canonical !== key) {
      result.renamed.push({ from: key, to: canonical });
      result.changed = true;
    }
    const existingFrom = origin.get(canonical);
    if (existingFrom === undefined) {
      data[canonical] = row;
      origin.set(canonical, key);
      continue;
    }
    const existing = data[canonical];
    const incomingWins =
      updatedAtOf(row) > updatedAtOf(existing) || (updatedAtOf(row) === updatedAtOf(existing) && key === canonical);
    const [kept, dropped] = incomingWins ? [key, existingFrom] : [existingFrom, key];
    result.collisions.push({
      key: canonical,
      keptFrom: kept,
      droppedFrom: dropped,
      dropped: incomingWins ? existing : row,
    });
    if (incomingWins) {
      data[canonical] = row;
      origin.set(canonical, key);
    }
  }
  return result;
}
