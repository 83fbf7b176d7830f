import { copyFile } from "node:fs/promises";
import { DEFAULT_AGENT_ID } from "../routing/normalize.js";
import { fileStamp } from "../state/atomic-json-file.js";
import type { StateTable } from "../state/state-port.js";
import { type KeyCollision, migrateStore } from "./migrate-store.js";
import { type SessionEntry, SessionEntrySchema } from "./session-entry.js";
import type { Logger } from "../logger.js";
import type { KeyContext } from "../routing/parse-session-key.js";
import type { StatePort, TableSpec } from "../state/state-port.js";
import { checkWith } from "../state/schema-check.js";

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
  /** called with a deleted entry (stored under `sessionKey`): its transcript is set aside, or deleted for good with `purge` */
  removeTranscript?: (entry: SessionEntry, options: { purge: boolean; sessionKey: string }) => Promise<void>;
  /**
   * called, synchronously, with each entry of the partitions the port evicts (docs/scale-out.md
   * "Partitions adopted and evicted one by one"): what is kept in memory of its transcript is dropped
   */
  forgetTranscript?: (entry: SessionEntry) => void;
  /** called at each step of a snapshot (crash tests) */
  onSnapshotStep?: TableSpec<SessionEntry>["onSnapshotStep"];
}

/** The state table of agent `agentId`'s sessions: one row per session, under its key. */
export const sessionsTableName = (agentId: string) => `sessions:${agentId}`;

/** What happened when a store file was opened. */
export interface StoreLoadReport {
  /** where a file that failed to parse was moved; the store then started empty */
  corruptMovedTo?: string;
  /** legacy or non-canonical keys rewritten */
  renamed: Array<{ from: string; to: string }>;
  collisions: KeyCollision[];
  /** copy of the file as it was before a migration rewrote it */
  backup?: string;
}

/** Rewrites legacy and non-canonical keys (a copy of the file kept first); undefined when nothing changed. */
async function migrateSessions(deps: SessionStoreDeps, report: StoreLoadReport, data: Record<string, unknown>) {
  const { path: file, logger } = deps;
  const migration = migrateStore(data, deps.keys);
  report.renamed = migration.renamed;
  report.collisions = migration.collisions;
  for (const collision of migration.collisions)
    logger.warn({ file, ...collision }, "two stored sessions became one key; kept the newer, dropped row logged here");
  if (!migration.changed) return undefined;
  if (!deps.state.readOnly) {
    report.backup = `${file}.pre-migration-${fileStamp((deps.now ?? Date.now)())}`;
    await copyFile(file, report.backup);
    logger.warn({ file, renamed: migration.renamed, backup: report.backup }, "session keys migrated to canonical form");
  }
  return migration.data;
}

/**
 * Opens the store's table. Rows are checked once when read from disk; later changes are checked
 * by patch. Invalid rows stay in the file untouched and are skipped on read. A snapshot the store
 * wrote itself is neither checked nor migrated again.
 */
export async function openSessionTable(
  deps: SessionStoreDeps,
): Promise<{ table: StateTable<SessionEntry>; report: StoreLoadReport }> {
  const report: StoreLoadReport = { renamed: [], collisions: [] };
  const table = await deps.state.table<SessionEntry>({
    name: sessionsTableName(deps.keys.defaultAgentId ?? DEFAULT_AGENT_ID),
    path: deps.path,
    what: "session store",
    keyField: "sessionKey",
    invalidRows: "keep",
    // A row is the session under its key (canonical: migrated above).
    sessionOf: (key) => key,
    ...(deps.onSnapshotStep && { onSnapshotStep: deps.onSnapshotStep }),
    // Adopted rows need no index (reads go to the image); an evicted session's kept transcript goes.
    onEvict: (rows) => {
      for (const [, entry] of rows) deps.forgetTranscript?.(entry);
    },
    check: checkWith(SessionEntrySchema),
    migrate: (data) => migrateSessions(deps, report, data),
  });
  if (table.report.corruptMovedTo) report.corruptMovedTo = table.report.corruptMovedTo;
  return { table, report };
}
