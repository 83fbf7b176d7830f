import { copyFile } from "node:fs/promises";
import { ErrorCodes, SwitchboardError } from "../errors.js";
import type { Logger } from "../logger.js";
import { type KeyContext, parseSessionKey } from "../routing/parse-session-key.js";
import type { ParsedSessionKey, SessionKind } from "../routing/session-key.js";
import { notASessionKey } from "../routing/session-key-refs.js";
import { DEFAULT_AGENT_ID } from "../routing/normalize.js";
import { fileStamp } from "../state/atomic-json-file.js";
import { type KeyCollision, migrateStore } from "./migrate-store.js";
import { applyEntryChange, type SessionEntry, type SessionEntryPatch, SessionEntrySchema } from "./session-entry.js";
import type { StatePort, TableSpec } from "../state/state-port.js";

/** What happened when a store file was opened. */
interface StoreLoadReport {
  /** where a file that failed to parse was moved; the store then started empty */
  corruptMovedTo?: string;
  /** legacy or non-canonical keys rewritten */
  renamed: Array<{ from: string; to: string }>;
  collisions: KeyCollision[];
  /** copy of the file as it was before a migration rewrote it */
  backup?: string;
}

/** One session as listed: its key, parsed, and its row. */
export interface SessionRow {
  key: string;
  parsed: ParsedSessionKey;
  entry: SessionEntry;
}

/** Which sessions {@link SessionStore.list} returns; filters apply before the limit. */
export interface ListFilter {
  kinds?: readonly SessionKind[];
  /** only sessions with a turn in the last N minutes */
  activeMinutes?: number;
  /** only sessions of this agent (for a store shared by agents) */
  agentId?: string;
  limit?: number;
}

/** Dependencies of {@link createSessionStore}. */
export interface SessionStoreDeps {
  /** where the store's table is kept (a read-only port gives a read-only store: no moving aside, no migration write, no patches) */
  state: StatePort;
  /** the `sessions.json` file */
  path: string;
  /** how keys are canonicalized (default agent, main key, scope) */
  keys: KeyContext;
  logger: Logger;
  now?: () => number;
  /** called with a deleted entry: its transcript is set aside, or deleted for good with `purge` */
  removeTranscript?: (entry: SessionEntry, options: { purge: boolean }) => Promise<void>;
  /** called at each step of a snapshot (crash tests) */
  onSnapshotStep?: TableSpec<SessionEntry>["onSnapshotStep"];
}

/** The sessions of one agent, kept in `sessions.json` through lowdb. */
export type SessionStore = Awaited<ReturnType<typeof createSessionStore>>;

/** Parsed keys remembered at most (well past the sessions a store holds in practice). */
const MAX_PARSED_KEYS = 200_000;

/** Opens (or creates) a store. A corrupt file is moved aside and reported, never overwritten. */
export async function createSessionStore(deps: SessionStoreDeps) {
  const { path: file, logger } = deps;
  const now = deps.now ?? Date.now;
  const report: StoreLoadReport = { renamed: [], collisions: [] };
  // Rows are checked once when read from disk; later changes are checked by patch. Invalid rows
  // stay in the file untouched and are skipped on read. A snapshot the store wrote itself is
  // neither checked nor migrated again.
  const readOnly = deps.state.readOnly;
  const table = await deps.state.table<SessionEntry>({
    name: `sessions:${deps.keys.defaultAgentId ?? DEFAULT_AGENT_ID}`,
    path: file,
    what: "session store",
    keyField: "sessionKey",
    invalidRows: "keep",
    ...(deps.onSnapshotStep && { onSnapshotStep: deps.onSnapshotStep }),
    check(_key, row) {
      const parsed = SessionEntrySchema.safeParse(row);
      return parsed.success ? { value: parsed.data } : { error: parsed.error.message };
    },
    async migrate(data) {
      const migration = migrateStore(data, deps.keys);
      report.renamed = migration.renamed;
      report.collisions = migration.collisions;
      for (const collision of migration.collisions) {
        logger.warn(
          { file, ...collision },
          "two stored sessions became one key; kept the newer, dropped row logged here",
        );
      }
      if (!migration.changed) return undefined;
      if (!readOnly) {
        report.backup = `${file}.pre-migration-${fileStamp(now())}`;
        await copyFile(file, report.backup);
        logger.warn(
          { file, renamed: migration.renamed, backup: report.backup },
          "session keys migrated to canonical form",
        );
      }
      return migration.data;
    },
  });
  if (table.report.corruptMovedTo) report.corruptMovedTo = table.report.corruptMovedTo;

  const parsedKeys = new Map<string, ParsedSessionKey | null>();
  function parsedKey(key: string): ParsedSessionKey | null {
    let parsed = parsedKeys.get(key);
    if (parsed === undefined) {
      parsed = parseSessionKey(key, deps.keys);
      parsedKeys.set(key, parsed);
    }
    return parsed;
  }

  /** `key` parsed; every write parses its key, so a key already canonical is remembered (a bounded number of them). */
  function canonical(key: string): ParsedSessionKey {
    const known = parsedKeys.get(key);
    if (known) return known;
    const parsed = parseSessionKey(key, deps.keys);
    if (!parsed) throw notASessionKey(key);
    if (parsed.key === key) {
      if (parsedKeys.size >= MAX_PARSED_KEYS) parsedKeys.clear();
      parsedKeys.set(key, parsed);
    }
    return parsed;
  }

  const read = (key: string): SessionEntry | undefined => table.get(key);

  /**
   * {@link patch} without waiting: the entry changes at once and is returned with `written`,
   * which settles when the change is durable. A turn uses it for its own bookkeeping and waits
   * for `written` later: its writes share the journal with the outbox, so the sync that lets its
   * reply go out makes them durable too. Throws (synchronously) like `patch` rejects.
   */
  function patchNow(
    key: string,
    update: (current: SessionEntry | undefined) => SessionEntryPatch | null | undefined | undefined,
  ): { entry: SessionEntry | undefined; written: Promise<void> } {
    const storeKey = canonical(key).key;
    const current = read(storeKey);
    if (table.isInvalid(storeKey)) {
      throw new SwitchboardError(
        ErrorCodes.INVALID_ARGUMENT,
        `session row "${storeKey}" in ${file} is invalid; fix or delete it by hand`,
      );
    }
    const change = update(current);
    if (!change) return { entry: current, written: Promise.resolve() };
    const next = applyEntryChange(current, change);
    if (!next.ok) {
      throw new SwitchboardError(
        ErrorCodes.INVALID_ARGUMENT,
        `invalid change to session "${storeKey}": ${next.issues.join("; ")}`,
      );
    }
    return { entry: next.entry, written: table.set(storeKey, next.entry) };
  }

  return {
    path: file,
    report,

    /** The entry for `key` (any spelling of it), or undefined. */
    get(key: string): SessionEntry | undefined {
      return read(canonical(key).key);
    },

    /** The key and entry whose current sessionId is `sessionId`. */
    findBySessionId(sessionId: string): SessionRow | undefined {
      for (const [key, entry] of table.entries()) {
        const parsed = entry.sessionId === sessionId ? parsedKey(key) : null;
        if (entry && parsed) return { key, parsed, entry };
      }
      return undefined;
    },

    /**
     * Read-modify-write of one entry: `update` sees the current entry and returns the fields to
     * change (`undefined` values remove a field), or nothing to leave it alone. The change is
     * applied at once and the promise settles when it is on disk.
     */
    async patch(
      key: string,
      update: (current: SessionEntry | undefined) => SessionEntryPatch | null | undefined | undefined,
    ): Promise<SessionEntry | undefined> {
      const { entry, written } = patchNow(key, update);
      await written;
      return entry;
    },

    patchNow,

    /** Sessions, newest turn first, filtered before the limit. */
    list(filter: ListFilter = {}): SessionRow[] {
      const since = filter.activeMinutes === undefined ? -Infinity : now() - filter.activeMinutes * 60_000;
      const rows: SessionRow[] = [];
      for (const [key, entry] of table.entries()) {
        if (entry.updatedAt < since) continue;
        const parsed = parsedKey(key);
        if (!parsed) continue;
        if (filter.kinds && !filter.kinds.includes(parsed.kind)) continue;
        if (filter.agentId && "agentId" in parsed && parsed.agentId !== filter.agentId) continue;
        rows.push({ key, parsed, entry });
      }
      rows.sort((a, b) => b.entry.updatedAt - a.entry.updatedAt);
      return filter.limit === undefined ? rows : rows.slice(0, Math.max(0, filter.limit));
    },

    /** Number of rows in the file (valid or not). */
    size(): number {
      return table.size;
    },

    /**
     * Deletes the entry and then its transcript (renamed aside, or deleted for good with `purge`:
     * retention); false when there was none. The entry goes at once, in the same step as the check.
     */
    async delete(key: string, options: { purge?: boolean } = {}): Promise<boolean> {
      const storeKey = canonical(key).key;
      const entry = read(storeKey);
      if (!table.has(storeKey)) return false;
      await table.delete(storeKey);
      if (entry && deps.removeTranscript) await deps.removeTranscript(entry, { purge: options.purge === true });
      return true;
    },

    /** Settles when every change made so far is on disk (in the journal). */
    flush(): Promise<void> {
      return table.flush();
    },

    /** Writes `sessions.json` now, so it holds every change (other processes read it with the journal). */
    snapshot(): Promise<void> {
      return table.snapshot();
    },

    /** Flushes and writes the snapshot: after this, `sessions.json` alone is exact. */
    close(): Promise<void> {
      return table.close();
    },
  };
}
