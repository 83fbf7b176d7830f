import { copyFile } from "node:fs/promises";
import { Low } from "lowdb";
import { ErrorCodes, SwitchboardError } from "../errors.js";
import type { Logger } from "../logger.js";
import { type KeyContext, parseSessionKey } from "../routing/parse-session-key.js";
import type { ParsedSessionKey, SessionKind } from "../routing/session-key.js";
import { notASessionKey } from "../routing/session-key-refs.js";
import { AtomicJsonFile, fileStamp, openJsonRecord } from "./atomic-json-file.js";
import { type KeyCollision, migrateStore } from "./migrate-store.js";
import { type SessionEntry, type SessionEntryPatch, SessionEntrySchema } from "./session-entry.js";
import { WriteCoalescer } from "./write-coalescer.js";

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
  /** the `sessions.json` file */
  path: string;
  /** how keys are canonicalized (default agent, main key, scope) */
  keys: KeyContext;
  logger: Logger;
  now?: () => number;
  /** called with an entry's transcript file name when the entry is deleted */
  removeTranscript?: (entry: SessionEntry) => Promise<void>;
  /** read without side effects (CLI while a gateway may run): no moving aside, no migration write, no patches */
  readOnly?: boolean;
}

/** The sessions of one agent, kept in `sessions.json` through lowdb. */
export type SessionStore = Awaited<ReturnType<typeof createSessionStore>>;

/** Opens (or creates) a store. A corrupt file is moved aside and reported, never overwritten. */
export async function createSessionStore(deps: SessionStoreDeps) {
  const { path: file, logger } = deps;
  const now = deps.now ?? Date.now;
  const report: StoreLoadReport = { renamed: [], collisions: [] };
  let db: Low<Record<string, unknown>>;
  if (deps.readOnly) {
    db = new Low<Record<string, unknown>>(new AtomicJsonFile(file), {});
    await db.read(); // a corrupt file throws CorruptFileError: read-only callers report it
  } else {
    const opened = await openJsonRecord(file, { logger, now, what: "session store" });
    db = opened.db;
    if (opened.corruptMovedTo) report.corruptMovedTo = opened.corruptMovedTo;
  }
  const migration = migrateStore(db.data, deps.keys);
  if (migration.changed && deps.readOnly) {
    db.data = migration.data;
  } else if (migration.changed) {
    report.backup = `${file}.pre-migration-${fileStamp(now())}`;
    await copyFile(file, report.backup);
    db.data = migration.data;
    await db.write();
    logger.warn({ file, renamed: migration.renamed, backup: report.backup }, "session keys migrated to canonical form");
  }
  for (const collision of migration.collisions) {
    logger.warn({ file, ...collision }, "two stored sessions became one key; kept the newer, dropped row logged here");
  }
  report.renamed = migration.renamed;
  report.collisions = migration.collisions;

  const writes = new WriteCoalescer(() => {
    if (deps.readOnly) throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, `${file} was opened read-only`);
    return db.write();
  });
  // Rows are validated once here; later changes are validated by patch. Invalid rows stay in the
  // file untouched and are skipped on read.
  const invalid = new Set<string>();
  for (const [key, row] of Object.entries(db.data)) {
    const parsed = SessionEntrySchema.safeParse(row);
    if (parsed.success) {
      db.data[key] = Object.freeze(parsed.data);
    } else {
      invalid.add(key);
      logger.warn({ file, sessionKey: key, err: parsed.error }, "skipping an invalid session row (kept in the file)");
    }
  }
  const parsedKeys = new Map<string, ParsedSessionKey | null>();
  function parsedKey(key: string): ParsedSessionKey | null {
    let parsed = parsedKeys.get(key);
    if (parsed === undefined) {
      parsed = parseSessionKey(key, deps.keys);
      parsedKeys.set(key, parsed);
    }
    return parsed;
  }

  function canonical(key: string): ParsedSessionKey {
    const parsed = parseSessionKey(key, deps.keys);
    if (!parsed) throw notASessionKey(key);
    return parsed;
  }

  function read(key: string): SessionEntry | undefined {
    return invalid.has(key) ? undefined : (db.data[key] as SessionEntry | undefined);
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
      for (const key of Object.keys(db.data)) {
        const entry = read(key);
        const parsed = entry?.sessionId === sessionId ? parsedKey(key) : null;
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
      const storeKey = canonical(key).key;
      const current = read(storeKey);
      if (invalid.has(storeKey)) {
        throw new SwitchboardError(
          ErrorCodes.INVALID_ARGUMENT,
          `session row "${storeKey}" in ${file} is invalid; fix or delete it by hand`,
        );
      }
      const change = update(current);
      if (!change) return current;
      const merged: Record<string, unknown> = { ...(current ?? {}) };
      for (const [field, value] of Object.entries(change)) {
        if (value === undefined) delete merged[field];
        else merged[field] = value;
      }
      const next = SessionEntrySchema.safeParse(merged);
      if (!next.success) {
        throw new SwitchboardError(
          ErrorCodes.INVALID_ARGUMENT,
          `invalid change to session "${storeKey}": ${next.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
        );
      }
      db.data[storeKey] = Object.freeze(next.data);
      await writes.request();
      return next.data;
    },

    /** Sessions, newest turn first, filtered before the limit. */
    list(filter: ListFilter = {}): SessionRow[] {
      const since = filter.activeMinutes === undefined ? -Infinity : now() - filter.activeMinutes * 60_000;
      const rows: SessionRow[] = [];
      for (const key of Object.keys(db.data)) {
        const entry = read(key);
        if (!entry || entry.updatedAt < since) continue;
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
      return Object.keys(db.data).length;
    },

    /** Deletes the entry and then its transcript (renamed aside); false when there was none. */
    async delete(key: string): Promise<boolean> {
      const storeKey = canonical(key).key;
      const entry = read(storeKey);
      if (db.data[storeKey] === undefined) return false;
      delete db.data[storeKey];
      invalid.delete(storeKey);
      await writes.request();
      if (entry && deps.removeTranscript) await deps.removeTranscript(entry);
      return true;
    },

    /** Settles when every change made so far is on disk. */
    flush(): Promise<void> {
      return writes.idle();
    },
  };
}
