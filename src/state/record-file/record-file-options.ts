import type { Logger } from "../../logger.js";
import type { SharedJournal } from "./shared-journal.js";

/** A row read from disk, checked: its value, or why it is invalid. */
type RowCheck<T> = { value: T } | { error: string };

/** The points of a snapshot, in order (crash tests stop a process at each). */
export type SnapshotStep = "captured" | "temp-written" | "renamed" | "meta-written" | "segments-deleted";

/** Options of {@link openRecordFile}. */
export interface RecordFileOptions<T> {
  /** the snapshot file, e.g. `sessions.json`; the journal lives next to it */
  path: string;
  /** what the file is, for log lines ("session store") */
  what: string;
  /** the log field naming a row's key ("sessionKey", "id"); default "key" */
  keyField?: string;
  logger: Logger;
  now?: () => number;
  /** checks a row read from disk */
  check: (key: string, row: unknown) => RowCheck<T>;
  /** invalid rows are kept in the file untouched and skipped ("keep"), or dropped with a warning ("drop") */
  invalidRows: "keep" | "drop";
  /**
   * Rewrites a snapshot this store did not write itself (hand-edited, older versions) before its
   * rows are checked; returns the new data, or undefined when nothing changed. A change is written
   * as a new snapshot before the open completes.
   */
  migrate?: (data: Record<string, unknown>) => Promise<Record<string, unknown> | undefined>;
  /** read without side effects: no moving aside, no truncating, no writes */
  readOnly?: boolean;
  /** a snapshot is written once the journal has grown by this many bytes (default: 4 MiB or half the snapshot) */
  snapshotAfterBytes?: number;
  /** ...or once changes are this old (default: 10 minutes) */
  snapshotAfterMs?: number;
  /** called at each step of a snapshot (crash tests) */
  onSnapshotStep?: (step: SnapshotStep) => Promise<void> | void;
  /**
   * Keep changes in this journal shared with other record files, as table `table`, instead of
   * the file's own `<file>.journal.<n>` segments (own segments left by an earlier version are
   * replayed once, then folded into a snapshot and deleted).
   */
  shared?: { journal: SharedJournal; table: string };
}

/** What opening a record file found. */
export interface RecordFileReport {
  /** where a snapshot that failed to parse was moved; the file then started from the journal alone */
  corruptMovedTo?: string;
  /** true when the snapshot was recognised as the store's own (rows not checked again) */
  trusted: boolean;
  /** journal changes replayed on top of the snapshot */
  replayed: number;
  /** copies of journal segments with unreadable lines (those lines were skipped) */
  corruptSegments: string[];
}

const MiB = 1024 * 1024;

/** When a snapshot is due: journal bytes (default 4 MiB or half the snapshot) or age of changes (default 10 minutes). */
export function snapshotLimits(
  options: Pick<RecordFileOptions<object>, "snapshotAfterBytes" | "snapshotAfterMs">,
  snapshotBytes: number,
): { bytes: number; ms: number } {
  return {
    bytes: options.snapshotAfterBytes ?? Math.max(4 * MiB, snapshotBytes / 2),
    ms: options.snapshotAfterMs ?? 600_000,
  };
}
