import { Low } from "lowdb";
import { ErrorCodes, SwitchboardError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { AtomicJsonFile, removeStaleTempFiles } from "../atomic-json-file.js";
import { Journal } from "./journal.js";
import { journalLine, removeSegment } from "./journal-segments.js";
import { readSnapshotData } from "./read-snapshot.js";
import { type RecordFileOptions, type RecordFileReport, snapshotLimits } from "./record-file-options.js";
import { type ReplayedChange, type ReplayedSegment, replaySegments } from "./replay-segments.js";
import type { SharedJournal } from "./shared-journal.js";
import { type SnapshotMeta, readSnapshotMeta, snapshotMatches, writeSnapshotMeta } from "./snapshot-meta.js";

export type { RecordFileOptions, RecordFileReport, SnapshotStep } from "./record-file-options.js";

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
    const file = new AtomicJsonFile(options.path, () => options.onSnapshotStep?.("temp-written"));
    this.db = new Low(file, {} as Record<string, unknown>);
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
    const limit = snapshotLimits(this.options, this.snapshotBytes);
    return bytes > 0 && (bytes >= limit.bytes || this.now() - this.snapshotAt >= limit.ms);
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
      for (const number of legacy) await removeSegment(this.path, number);
    } else await this.journal.dropCovered(seq);
    await step?.("segments-deleted");
  }

  /** Loads the snapshot, checks its rows unless it is the store's own, and replays the journal. */
  async load(): Promise<void> {
    const { options } = this;
    if (!options.readOnly) await removeStaleTempFiles(this.path, this.logger);
    const meta = await readSnapshotMeta(this.path);
    let rewrite = await this.loadSnapshot(meta);
    // The sidecar's sequence number counts in the journal it names (none: the file's own).
    this.snapshotSeq = meta && meta.journal === undefined ? meta.seq : -1;
    this.snapshotBytes = meta?.size ?? 0;
    const { path, logger, now, report } = this;
    const readOnly = options.readOnly === true;
    const replay = { path, what: options.what, readOnly, logger, now, corruptSegments: report.corruptSegments };
    const segments = await replaySegments(replay, this.snapshotSeq, (change) => this.replayChange(change));
    if (segments.some((s) => s.corrupt)) rewrite = true;
    if (this.shared) rewrite = this.joinShared(this.shared, meta, segments) || rewrite;
    else this.openOwnJournal(segments);
    this.snapshotAt = this.now();
    if (rewrite && !options.readOnly) await this.snapshot();
  }

  /** Reads the snapshot into rows (checked unless it is the store's own); true when it must be rewritten. */
  private async loadSnapshot(meta: SnapshotMeta | undefined): Promise<boolean> {
    const trusted = await snapshotMatches(this.path, meta);
    let data = await readSnapshotData(this.db, this.options, this.now, this.report);
    this.hadSnapshot = Object.keys(data).length > 0;
    let rewrite = false;
    if (!trusted && this.options.migrate) {
      const migrated = await this.options.migrate(data);
      if (migrated) [data, rewrite] = [migrated, true];
    }
    const knownInvalid = new Set(trusted ? meta!.invalid : []);
    for (const [key, row] of Object.entries(data)) {
      if (trusted) {
        if (knownInvalid.has(key)) this.invalid.set(key, row);
        else this.rows.set(key, Object.freeze(row as T));
      } else if (!this.accept(key, row, "snapshot") && this.options.invalidRows === "drop") rewrite = true;
    }
    this.report.trusted = trusted;
    return rewrite;
  }

  /** Replays this table's changes from the shared journal; true when a snapshot must fold in own segments or corruption. */
  private joinShared(
    shared: { journal: SharedJournal; table: string },
    meta: SnapshotMeta | undefined,
    segments: ReplayedSegment[],
  ): boolean {
    const after = meta && meta.journal === shared.journal.id ? meta.seq : -1;
    for (const change of shared.journal.take(shared.table)) if (change.seq > after) this.replayChange(change);
    this.snapshotSeq = after;
    shared.journal.opened(shared.table, after);
    this.legacySegments = segments.map((segment) => segment.number);
    return this.legacySegments.length > 0 || shared.journal.report.corruptSegments.length > 0;
  }

  /** Continues the file's own journal after the segments found. */
  private openOwnJournal(segments: ReplayedSegment[]): void {
    this.nextSeq = Math.max(this.snapshotSeq, ...segments.map((s) => s.maxSeq)) + 1;
    const nextSegment = (segments.at(-1)?.number ?? 0) + 1;
    this.journal = new Journal(this.path, nextSegment, this.logger);
    for (const segment of segments) this.journal.finished.push({ number: segment.number, maxSeq: segment.maxSeq });
  }

  /** Applies one change read back from a journal: the row's after-image, or its deletion. */
  private replayChange(change: Pick<ReplayedChange, "key"> & ({ value: unknown } | { deleted: true })): void {
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
    const keep = this.options.invalidRows === "keep";
    if (keep) this.invalid.set(key, row);
    const fields = { file: this.path, [this.options.keyField ?? "key"]: key, source, problem: checked.error };
    const what = this.options.what;
    this.logger.warn(
      fields,
      keep ? `skipping an invalid ${what} row (kept in the file)` : `dropping an unreadable ${what} row`,
    );
    return false;
  }
}
