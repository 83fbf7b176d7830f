import { copyFile, readFile, rename, truncate, unlink } from "node:fs/promises";
import { Low } from "lowdb";
import { ErrorCodes, SwitchboardError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { AtomicJsonFile, CorruptFileError, fileStamp, removeStaleTempFiles } from "../atomic-json-file.js";
import { Journal, type WrittenSegment } from "./journal.js";
import { journalLine, listSegments, parseSegment, segmentPath } from "./journal-segments.js";
import type { SharedJournal } from "./shared-journal.js";
import { readSnapshotMeta, snapshotMatches, writeSnapshotMeta } from "./snapshot-meta.js";

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

async function unlinkIfThere(file: string): Promise<void> {
  await unlink(file).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== "ENOENT") throw err;
  });
}

/** Opens (or creates) a record file; see {@link RecordFile}. */
export async function openRecordFile<T extends object>(options: RecordFileOptions<T>): Promise<RecordFile<T>> {
  const file = new RecordFile(options);
  await file.load();
  return file;
}

/**
 * A JSON object file of rows (`sessions.json`, `state/outbox.json`, ...) kept in memory, made
 * durable by a journal with group commit, and rewritten as a readable snapshot in the background.
 * Every change is appended to the journal as the row's full after-image; `set` and `delete`
 * settle when that line is synced. Opening loads the snapshot and replays the journal past the
 * snapshot's sequence number (see docs/performance.md).
 */
export class RecordFile<T extends object> {
  readonly path: string;
  readonly report: RecordFileReport = { trusted: false, replayed: 0, corruptSegments: [] };
  private readonly rows = new Map<string, T>();
  /** rows that failed their check, kept as they were ("keep" mode) */
  private readonly invalid = new Map<string, unknown>();
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly db: Low<Record<string, unknown>>;
  private journal!: Journal;
  private readonly shared: { journal: SharedJournal; table: string } | undefined;
  /** own journal segments left from before the file joined a shared journal: deleted after the next snapshot */
  private legacySegments: number[] = [];
  private nextSeq = 0;
  private snapshotSeq = -1;
  private snapshotAt = 0;
  private snapshotBytes = 0;
  private snapshotting: Promise<void> | undefined;
  /** a snapshot file existed at open */
  private hadSnapshot = false;
  /** this process has written a snapshot */
  private wroteSnapshot = false;

  constructor(private readonly options: RecordFileOptions<T>) {
    this.path = options.path;
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
    this.shared = options.shared;
    this.db = new Low(
      new AtomicJsonFile(options.path, () => options.onSnapshotStep?.("temp-written")),
      {} as Record<string, unknown>,
    );
  }

  /** The valid row under `key`. */
  get(key: string): T | undefined {
    return this.rows.get(key);
  }

  /** True when `key` holds a row, valid or not. */
  has(key: string): boolean {
    return this.rows.has(key) || this.invalid.has(key);
  }

  /** True when `key` holds a row that failed its check (kept untouched). */
  isInvalid(key: string): boolean {
    return this.invalid.has(key);
  }

  /** Keys of the valid rows, in insertion order. */
  keys(): IterableIterator<string> {
    return this.rows.keys();
  }

  /** The valid rows. */
  values(): IterableIterator<T> {
    return this.rows.values();
  }

  /** Keys and valid rows. */
  entries(): IterableIterator<[string, T]> {
    return this.rows.entries();
  }

  /** Number of rows, valid or not. */
  get size(): number {
    return this.rows.size + this.invalid.size;
  }

  /** Replaces the row under `key` (the value is frozen); settles once the change is on disk. */
  set(key: string, value: T): Promise<void> {
    this.assertWritable();
    this.rows.set(key, Object.freeze(value));
    this.invalid.delete(key);
    return this.append(key, value);
  }

  /** Removes the row under `key`, valid or not; settles once the change is on disk. */
  delete(key: string): Promise<void> {
    this.assertWritable();
    this.rows.delete(key);
    this.invalid.delete(key);
    return this.append(key, undefined);
  }

  /** Settles when every change made so far is on disk. */
  flush(): Promise<void> {
    if (this.shared) return this.shared.journal.idle();
    return this.journal ? this.journal.idle() : Promise.resolve();
  }

  /** Writes the snapshot now (one at a time; a call during a snapshot waits for it and writes another). */
  async snapshot(): Promise<void> {
    while (this.snapshotting) await this.snapshotting;
    this.snapshotting = this.writeSnapshot().finally(() => {
      this.snapshotting = undefined;
    });
    return this.snapshotting;
  }

  /**
   * Flushes, closes the journal segment and writes the snapshot, so the file alone is exact. A
   * change made later (a turn that outlived a stop) still works: it opens a new journal segment.
   */
  async close(): Promise<void> {
    if (this.options.readOnly) return;
    if (this.shared) await this.shared.journal.idle();
    else await this.journal.close();
    while (this.snapshotting) await this.snapshotting;
    // A file the store did not write itself is rewritten too, so the next open can trust it.
    const foreign = !this.report.trusted && this.hadSnapshot && !this.wroteSnapshot;
    const dirty = this.shared
      ? this.shared.journal.lastChangeOf(this.shared.table) > this.snapshotSeq || this.legacySegments.length > 0
      : this.nextSeq - 1 > this.snapshotSeq || this.journal.finished.length > 0;
    if (dirty || foreign) await this.snapshot();
  }

  private assertWritable(): void {
    if (this.options.readOnly)
      throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, `${this.path} was opened read-only`);
  }

  private append(key: string, value: T | undefined): Promise<void> {
    let done: Promise<void>;
    if (this.shared) done = this.shared.journal.append(this.shared.table, key, value);
    else {
      const seq = this.nextSeq++;
      done = this.journal.append(journalLine(seq, key, value), seq);
    }
    if (!this.snapshotting && this.snapshotDue()) {
      this.snapshot().catch((err: unknown) =>
        this.logger.error(
          { file: this.path, err },
          `${this.options.what}: background snapshot failed; the journal still holds every change`,
        ),
      );
    }
    return done;
  }

  private snapshotDue(): boolean {
    if (this.shared?.journal.committing) return false; // a commit's writes are captured whole, after it
    const bytes = this.shared
      ? this.shared.journal.bytesSinceSnapshot(this.shared.table)
      : this.journal.bytesSinceSnapshot;
    if (bytes === 0) return false;
    const limit = this.options.snapshotAfterBytes ?? Math.max(4 * MiB, this.snapshotBytes / 2);
    return bytes >= limit || this.now() - this.snapshotAt >= (this.options.snapshotAfterMs ?? 600_000);
  }

  private async writeSnapshot(): Promise<void> {
    const step = this.options.onSnapshotStep;
    const shared = this.shared;
    let seq: number;
    if (shared) seq = shared.journal.snapshotStarted(shared.table);
    else {
      seq = this.nextSeq - 1;
      this.journal.rotate();
      this.journal.bytesSinceSnapshot = 0;
    }
    this.snapshotAt = this.now();
    const data: Record<string, unknown> = {};
    for (const [key, row] of this.invalid) data[key] = row;
    for (const [key, row] of this.rows) data[key] = row;
    await step?.("captured");
    this.db.data = data;
    await this.db.write();
    await step?.("renamed");
    const meta = await writeSnapshotMeta(this.path, seq, [...this.invalid.keys()], shared?.journal.id);
    this.snapshotSeq = seq;
    this.wroteSnapshot = true;
    this.snapshotBytes = meta.size;
    await step?.("meta-written");
    if (shared) {
      await shared.journal.covered(shared.table, seq);
      const legacy = this.legacySegments;
      this.legacySegments = [];
      for (const number of legacy) await unlinkIfThere(segmentPath(this.path, number));
      await step?.("segments-deleted");
      return;
    }
    const covered = this.journal.finished.filter((segment) => segment.maxSeq <= seq);
    for (const segment of covered) {
      await unlinkIfThere(segmentPath(this.path, segment.number));
      this.journal.finished.splice(this.journal.finished.indexOf(segment), 1);
    }
    await step?.("segments-deleted");
  }

  /** Loads the snapshot, checks its rows unless it is the store's own, and replays the journal. */
  async load(): Promise<void> {
    const { options, logger } = this;
    if (!options.readOnly) await removeStaleTempFiles(this.path, logger);
    const meta = await readSnapshotMeta(this.path);
    const trusted = await snapshotMatches(this.path, meta);
    let data = await this.readSnapshot();
    this.hadSnapshot = Object.keys(data).length > 0;
    let rewrite = false;
    if (!trusted && options.migrate) {
      const migrated = await options.migrate(data);
      if (migrated) [data, rewrite] = [migrated, true];
    }
    const knownInvalid = new Set(trusted ? meta!.invalid : []);
    for (const [key, row] of Object.entries(data)) {
      if (trusted) {
        if (knownInvalid.has(key)) this.invalid.set(key, row);
        else this.rows.set(key, Object.freeze(row as T));
      } else if (!this.accept(key, row, "snapshot") && options.invalidRows === "drop") rewrite = true;
    }
    this.report.trusted = trusted;
    // The sidecar's sequence number counts in the journal it names (none: the file's own).
    this.snapshotSeq = meta && meta.journal === undefined ? meta.seq : -1;
    this.snapshotBytes = meta?.size ?? 0;
    const segments = await this.replay(this.snapshotSeq);
    if (segments.some((s) => s.corrupt)) rewrite = true;
    const shared = this.shared;
    if (shared) {
      const after = meta && meta.journal === shared.journal.id ? meta.seq : -1;
      for (const change of shared.journal.take(shared.table)) if (change.seq > after) this.replayChange(change);
      this.snapshotSeq = after;
      shared.journal.opened(shared.table, after);
      this.snapshotAt = this.now();
      this.legacySegments = segments.map((segment) => segment.number);
      if (this.legacySegments.length > 0 || shared.journal.report.corruptSegments.length > 0) rewrite = true;
      if (rewrite && !options.readOnly) await this.snapshot();
      return;
    }
    this.nextSeq = Math.max(this.snapshotSeq, ...segments.map((s) => s.maxSeq)) + 1;
    this.snapshotAt = this.now();
    const nextSegment = (segments.at(-1)?.number ?? 0) + 1;
    this.journal = new Journal(this.path, nextSegment, logger);
    for (const segment of segments) this.journal.finished.push({ number: segment.number, maxSeq: segment.maxSeq });
    if (rewrite && !options.readOnly) await this.snapshot();
  }

  /** Applies one change read back from a journal: the row's after-image, or its deletion. */
  private replayChange(change: { key: string; value: unknown } | { key: string; deleted: true }): void {
    this.report.replayed++;
    if ("deleted" in change) {
      this.rows.delete(change.key);
      this.invalid.delete(change.key);
    } else this.accept(change.key, change.value, "journal");
  }

  /** Files the row under valid or invalid; false when it failed its check. */
  private accept(key: string, row: unknown, source: string): boolean {
    const checked = this.options.check(key, row);
    if ("value" in checked) {
      this.rows.set(key, Object.freeze(checked.value));
      this.invalid.delete(key);
      return true;
    }
    this.rows.delete(key);
    if (this.options.invalidRows === "keep") {
      this.invalid.set(key, row);
      this.logger.warn(
        { file: this.path, [this.options.keyField ?? "key"]: key, source, problem: checked.error },
        `skipping an invalid ${this.options.what} row (kept in the file)`,
      );
    } else {
      const fields = { file: this.path, [this.options.keyField ?? "key"]: key, source, problem: checked.error };
      this.logger.warn(fields, `dropping an unreadable ${this.options.what} row`);
    }
    return false;
  }

  private async readSnapshot(): Promise<Record<string, unknown>> {
    try {
      await this.db.read();
      return this.db.data;
    } catch (err) {
      if (!(err instanceof CorruptFileError) || this.options.readOnly) throw err;
      const movedTo = `${this.path}.corrupt-${fileStamp(this.now())}`;
      await rename(this.path, movedTo);
      this.report.corruptMovedTo = movedTo;
      this.logger.error(
        { file: this.path, movedTo, err },
        `${this.options.what} is corrupt; moved aside, starting empty`,
      );
      return {};
    }
  }

  /** Applies every journal change past `afterSeq`, segment by segment; returns what each segment held. */
  private async replay(afterSeq: number): Promise<Array<WrittenSegment & { corrupt: boolean }>> {
    const found: Array<WrittenSegment & { corrupt: boolean }> = [];
    for (const segment of await listSegments(this.path)) {
      const buffer = await readFile(segment.path).catch((err: NodeJS.ErrnoException) => {
        // A writer's snapshot removed it while this read-only reader was listing: its changes are in the snapshot.
        if (err.code === "ENOENT" && this.options.readOnly) return undefined;
        throw err;
      });
      if (!buffer) continue;
      const content = parseSegment(buffer);
      let maxSeq = -1;
      for (const change of content.changes) {
        maxSeq = Math.max(maxSeq, change.seq);
        if (change.seq > afterSeq) this.replayChange(change);
      }
      if (content.tornBytes > 0 && !this.options.readOnly) {
        // A line without its newline was never acknowledged: cut it off.
        await truncate(segment.path, content.wholeBytes);
        this.logger.warn(
          { file: segment.path, bytes: content.tornBytes },
          `${this.options.what}: cut off a torn last journal line (a write a crash interrupted; it was never acknowledged)`,
        );
      }
      const corrupt = content.badLines.length > 0;
      if (corrupt && !this.options.readOnly) {
        const copy = `${segment.path}.corrupt-${fileStamp(this.now())}`;
        await copyFile(segment.path, copy);
        this.report.corruptSegments.push(copy);
        this.logger.error(
          { file: segment.path, lines: content.badLines, copy },
          `${this.options.what}: unreadable journal lines skipped; the segment was copied aside`,
        );
      }
      found.push({ number: segment.number, maxSeq, corrupt });
    }
    return found;
  }
}
