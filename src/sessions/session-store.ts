import { ErrorCodes, SwitchboardError } from "../errors.js";
import type { SessionKind } from "../routing/session-key.js";
import type { StateTable } from "../state/state-port.js";
import { type SessionKeyCache, createSessionKeyCache } from "./session-key-cache.js";
import { type SessionFilter, type SessionRow, hasFields, keepUpTo } from "./session-select.js";
import { applyEntryChange, type SessionEntry, type SessionEntryPatch } from "./session-entry.js";
import { type SessionStoreDeps, openSessionTable } from "./session-table.js";

/** Which sessions {@link SessionStore.list} returns; filters apply before the limit. */
interface ListFilter {
  kinds?: readonly SessionKind[];
  /** only sessions with a turn in the last N minutes */
  activeMinutes?: number;
  /** only sessions of this agent (for a store shared by agents) */
  agentId?: string;
  limit?: number;
}

/** The sessions of one agent, kept in `sessions.json` through lowdb. */
export type SessionStore = Awaited<ReturnType<typeof createSessionStore>>;

/** What the store's reads and writes share. */
interface StoreParts {
  file: string;
  table: StateTable<SessionEntry>;
  keys: SessionKeyCache;
  now: () => number;
  removeTranscript: SessionStoreDeps["removeTranscript"];
}

type EntryUpdate = (current: SessionEntry | undefined) => SessionEntryPatch | null | undefined | undefined;

/**
 * {@link patch} without waiting: the entry changes at once and is returned with `written`,
 * which settles when the change is durable. A turn uses it for its own bookkeeping and waits
 * for `written` later: its writes share the journal with the outbox, so the sync that lets its
 * reply go out makes them durable too. Throws (synchronously) like `patch` rejects.
 */
function patchNow(
  { table, keys, file }: StoreParts,
  key: string,
  update: EntryUpdate,
): { entry: SessionEntry | undefined; written: Promise<void> } {
  const storeKey = keys.canonical(key).key;
  const current = table.get(storeKey);
  if (table.isInvalid(storeKey)) {
    const message = `session row "${storeKey}" in ${file} is invalid; fix or delete it by hand`;
    throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, message);
  }
  const change = update(current);
  if (!change) return { entry: current, written: Promise.resolve() };
  const next = applyEntryChange(current, change);
  if (!next.ok) {
    const message = `invalid change to session "${storeKey}": ${next.issues.join("; ")}`;
    throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, message);
  }
  return { entry: next.entry, written: table.set(storeKey, next.entry) };
}

/** Sessions, newest turn first, filtered before the limit. */
function listSessions({ table, keys, now }: StoreParts, filter: ListFilter): SessionRow[] {
  const since = filter.activeMinutes === undefined ? -Infinity : now() - filter.activeMinutes * 60_000;
  const rows: SessionRow[] = [];
  for (const [key, entry] of table.entries()) {
    if (entry.updatedAt < since) continue;
    const parsed = keys.parsedKey(key);
    if (!parsed) continue;
    if (filter.kinds && !filter.kinds.includes(parsed.kind)) continue;
    if (filter.agentId && "agentId" in parsed && parsed.agentId !== filter.agentId) continue;
    rows.push({ key, parsed, entry });
  }
  rows.sort((a, b) => b.entry.updatedAt - a.entry.updatedAt);
  return filter.limit === undefined ? rows : rows.slice(0, Math.max(0, filter.limit));
}

/** The store's reads: one entry by any spelling of its key, by sessionId, or a filtered list. */
function sessionReads(parts: StoreParts) {
  const { table, keys } = parts;
  return {
    /** The entry for `key` (any spelling of it), or undefined. */
    get: (key: string): SessionEntry | undefined => table.get(keys.canonical(key).key),
    /** The key and entry whose current sessionId is `sessionId`. */
    findBySessionId(sessionId: string): SessionRow | undefined {
      for (const [key, entry] of table.entries()) {
        const parsed = entry.sessionId === sessionId ? keys.parsedKey(key) : null;
        if (entry && parsed) return { key, parsed, entry };
      }
      return undefined;
    },
    list: (filter: ListFilter = {}): SessionRow[] => listSessions(parts, filter),
    /** The sessions matching `filter` and `keep`, newest first, at most `filter.limit` (see SelectSessions). */
    async select(filter: SessionFilter, keep: (row: SessionRow) => boolean = () => true): Promise<SessionRow[]> {
      const { limit, ...listed } = filter;
      const rows = listSessions(parts, { kinds: listed.kinds, activeMinutes: listed.activeMinutes });
      return keepUpTo(rows, (row) => hasFields(row.entry, listed) && keep(row), limit);
    },
    /** Number of rows in the file (valid or not). */
    size: (): number => table.size,
  };
}

/** The store's writes: patch (now or awaited), delete, and the table's flush, snapshot and close. */
function sessionWrites(parts: StoreParts) {
  const { table, keys } = parts;
  return {
    /**
     * Read-modify-write of one entry: `update` sees the current entry and returns the fields to
     * change (`undefined` values remove a field), or nothing to leave it alone. The change is
     * applied at once and the promise settles when it is on disk.
     */
    async patch(key: string, update: EntryUpdate): Promise<SessionEntry | undefined> {
      const { entry, written } = patchNow(parts, key, update);
      await written;
      return entry;
    },
    patchNow: (key: string, update: EntryUpdate) => patchNow(parts, key, update),
    /**
     * Deletes the entry and then its transcript (renamed aside, or deleted for good with `purge`:
     * retention); false when there was none. The entry goes at once, in the same step as the check.
     */
    async delete(key: string, options: { purge?: boolean } = {}): Promise<boolean> {
      const storeKey = keys.canonical(key).key;
      const entry = table.get(storeKey);
      if (!table.has(storeKey)) return false;
      await table.delete(storeKey);
      if (entry && parts.removeTranscript)
        await parts.removeTranscript(entry, { purge: options.purge === true, sessionKey: storeKey });
      return true;
    },
    /** Settles when every change made so far is on disk (in the journal). */
    flush: (): Promise<void> => table.flush(),
    /** Writes `sessions.json` now, so it holds every change (other processes read it with the journal). */
    snapshot: (): Promise<void> => table.snapshot(),
    /** Flushes and writes the snapshot: after this, `sessions.json` alone is exact. */
    close: (): Promise<void> => table.close(),
  };
}

/** Opens (or creates) a store. A corrupt file is moved aside and reported, never overwritten. */
export async function createSessionStore(deps: SessionStoreDeps) {
  const { table, report } = await openSessionTable(deps);
  const keys = createSessionKeyCache(deps.keys);
  const now = deps.now ?? Date.now;
  const parts: StoreParts = { file: deps.path, table, keys, now, removeTranscript: deps.removeTranscript };
  return { path: deps.path, report, ...sessionReads(parts), ...sessionWrites(parts) };
}
