import { randomUUID } from "node:crypto";
import { copyFile, readFile, truncate, unlink } from "node:fs/promises";
import path from "node:path";
import { ErrorCodes, SwitchboardError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { fileStamp } from "../atomic-json-file.js";
import { type Deferred, Journal, type WrittenSegment, deferred } from "./journal.js";
import {
  type SharedChange,
  type TableWrite,
  listSegments,
  parseSharedSegment,
  segmentPath,
  sharedHeaderLine,
  sharedLine,
} from "./journal-segments.js";

/** Options of {@link openSharedJournal}. */
export interface SharedJournalOptions {
  /** the folder of the journal (`state/`); segments are `<dir>/state.journal.<n>` */
  dir: string;
  logger: Logger;
  now?: () => number;
  /** read without side effects: no truncating, no copies, no writes */
  readOnly?: boolean;
  /** told how long each batch's write and sync took, in seconds (metrics) */
  onSync?: ((seconds: number) => void) | undefined;
}

/** What opening the shared journal found. */
export interface SharedJournalReport {
  /** copies of segments with unreadable lines (those lines were skipped) */
  corruptSegments: string[];
}

/** Opens (or starts) the journal shared by several record files; see {@link SharedJournal}. */
export async function openSharedJournal(options: SharedJournalOptions): Promise<SharedJournal> {
  const journal = new SharedJournal(options);
  await journal.load();
  return journal;
}

/**
 * One journal for several record files (the tables of the local state: the session stores, the
 * outbox, the inbox, the sub-agent registry), so the writes of one turn share one `fdatasync`
 * and a {@link SharedJournal.commit} of several tables is one line: on disk whole or not at all.
 * Every line names its table; each table's snapshot records the journal's id and the last
 * sequence number it holds, and a segment is deleted once every table with lines in it has a
 * snapshot past them.
 */
export class SharedJournal {
  readonly report: SharedJournalReport = { corruptSegments: [] };
  /** the journal's id, written first in every segment; a snapshot naming another id predates this journal */
  id = "";
  private readonly file: string;
  private readonly logger: Logger;
  private readonly now: () => number;
  private writer!: Journal;
  private nextSeq = 0;
  /** changes read at open, per table, until the table opens and takes them */
  private readonly loaded = new Map<string, SharedChange[]>();
  /** per table: the last sequence number of a change to it (read at open or written since) */
  private readonly lastSeqOf = new Map<string, number>();
  /** per table: the sequence number its snapshot holds (known once the table is open) */
  private readonly coveredOf = new Map<string, number>();
  /** per table: bytes of its lines since its last snapshot */
  private readonly bytesOf = new Map<string, number>();
  /** the changes of a commit in progress */
  private group: TableWrite[] | undefined;

  constructor(private readonly options: SharedJournalOptions) {
    this.file = path.join(options.dir, "state");
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
  }

  /** True while a commit collects its writes (snapshots wait until it ends). */
  get committing(): boolean {
    return this.group !== undefined;
  }

  /** The sequence number of the last change queued. */
  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  /** Hands a table the changes found for it at open (once; later calls get none). */
  take(table: string): SharedChange[] {
    const changes = this.loaded.get(table) ?? [];
    this.loaded.delete(table);
    return changes;
  }

  /** The last sequence number of a change to `table`, or -1. */
  lastChangeOf(table: string): number {
    return this.lastSeqOf.get(table) ?? -1;
  }

  /** Bytes of `table`'s lines since its last snapshot started. */
  bytesSinceSnapshot(table: string): number {
    return this.bytesOf.get(table) ?? 0;
  }

  /**
   * Queues a change of `table` (value undefined: deleted); settles once it is on disk. Inside
   * {@link commit} the change joins the commit's line.
   */
  append(table: string, key: string, value: unknown): Promise<void> {
    if (this.options.readOnly)
      throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, `${this.file} journal was opened read-only`);
    const write = { table, key, value };
    if (this.group) {
      this.group.push(write);
      return this.groupDone!.promise;
    }
    return this.queue([write]);
  }

  private groupDone: Deferred | undefined;

  /**
   * Runs `fn`, which changes tables synchronously; every change it makes is written as one line,
   * so after a crash either all of them are there or none. Settles once that line is on disk. If
   * `fn` throws, the changes it made before (already in memory) are still written, then the error
   * is rethrown. Commits do not nest: a commit inside a commit joins the outer one.
   */
  commit(fn: () => void): Promise<void> {
    if (this.group) {
      fn();
      return this.groupDone!.promise;
    }
    const group: TableWrite[] = [];
    const done = deferred();
    this.group = group;
    this.groupDone = done;
    let failure: { err: unknown } | undefined;
    try {
      fn();
    } catch (err) {
      failure = { err };
    } finally {
      this.group = undefined;
      this.groupDone = undefined;
    }
    if (group.length > 0) this.queue(group).then(done.resolve, done.reject);
    else done.resolve();
    if (failure) throw failure.err;
    return done.promise;
  }

  private queue(writes: TableWrite[]): Promise<void> {
    const seq = this.nextSeq++;
    const line = sharedLine(seq, writes);
    const tables = new Set<string>();
    for (const write of writes) {
      tables.add(write.table);
      this.lastSeqOf.set(write.table, seq);
    }
    const bytes = Buffer.byteLength(line) + 1;
    for (const table of tables) this.bytesOf.set(table, (this.bytesOf.get(table) ?? 0) + bytes);
    return this.writer.append(line, seq, tables);
  }

  /** Settles when every change queued so far is on disk (or failed). */
  idle(): Promise<void> {
    return this.writer ? this.writer.idle() : Promise.resolve();
  }

  /**
   * A snapshot of `table` starts: later changes go to a new segment (so the older ones can be
   * deleted once covered) and its byte count restarts. Returns the sequence number the snapshot
   * will hold: every change queued so far.
   */
  snapshotStarted(table: string): number {
    this.writer.rotate();
    this.bytesOf.set(table, 0);
    return this.lastSeq;
  }

  /** Records that `table`'s snapshot on disk holds every change up to `seq`, and deletes segments every table has covered. */
  async covered(table: string, seq: number): Promise<void> {
    this.coveredOf.set(table, Math.max(seq, this.coveredOf.get(table) ?? -1));
    await this.deleteCovered();
  }

  private async deleteCovered(): Promise<void> {
    for (const segment of [...this.writer.finished]) {
      if (!this.isCovered(segment)) continue;
      // Two snapshots finishing together may both find it: the second finds it gone.
      const index = this.writer.finished.indexOf(segment);
      if (index < 0) continue;
      this.writer.finished.splice(index, 1);
      await unlink(segmentPath(this.file, segment.number)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "ENOENT") throw err;
      });
    }
  }

  /** Registers an opened table's snapshot position (lines at or before it are in its snapshot). */
  opened(table: string, snapshotSeq: number): void {
    this.coveredOf.set(table, snapshotSeq);
    // The table's new lines must number past its snapshot, even when the lines that took the
    // numbers up to it are gone (segments of a run whose other tables stopped cleanly) or were
    // never synced (a snapshot holds changes still queued when it started).
    this.nextSeq = Math.max(this.nextSeq, snapshotSeq + 1);
  }

  private isCovered(segment: WrittenSegment): boolean {
    for (const [table, seq] of segment.tables ?? [])
      if ((this.coveredOf.get(table) ?? Number.NEGATIVE_INFINITY) < seq) return false;
    return true;
  }

  /** Writes what is queued and closes the current segment. */
  async close(): Promise<void> {
    if (this.options.readOnly || !this.writer) return;
    await this.writer.close();
    await this.deleteCovered(); // the last segment is finished now: delete it too if every table covers it
  }

  /** Reads every segment on disk: the journal's id, and each table's changes. */
  async load(): Promise<void> {
    const { logger, readOnly } = this.options;
    const segments = await listSegments(this.file);
    let maxSeq = -1;
    const finished: WrittenSegment[] = [];
    for (const segment of segments) {
      const buffer = await readFile(segment.path).catch((err: NodeJS.ErrnoException) => {
        // A writer's snapshot removed it while this read-only reader was listing: its changes are in the snapshots.
        if (err.code === "ENOENT" && readOnly) return undefined;
        throw err;
      });
      if (!buffer) continue;
      const content = parseSharedSegment(buffer);
      if (content.id !== undefined) this.id ||= content.id;
      const tables = this.takeChanges(content.changes);
      for (const seq of tables.values()) maxSeq = Math.max(maxSeq, seq);
      if (!readOnly) await this.repair(segment.path, content);
      finished.push({ number: segment.number, maxSeq: Math.max(-1, ...tables.values()), tables });
    }
    // Sequence numbers grow line by line and segment by segment, so each table's list is in order.
    this.nextSeq = maxSeq + 1;
    this.id ||= randomUUID();
    this.writer = new Journal(
      this.file,
      (segments.at(-1)?.number ?? 0) + 1,
      logger,
      sharedHeaderLine(this.id),
      this.options.onSync,
    );
    this.writer.finished.push(...finished);
  }

  /** Keeps one segment's changes per table; each table's last sequence number in that segment. */
  private takeChanges(changes: ReturnType<typeof parseSharedSegment>["changes"]): Map<string, number> {
    const tables = new Map<string, number>();
    for (const change of changes) {
      tables.set(change.table, Math.max(change.seq, tables.get(change.table) ?? -1));
      this.lastSeqOf.set(change.table, Math.max(change.seq, this.lastSeqOf.get(change.table) ?? -1));
      let list = this.loaded.get(change.table);
      if (!list) {
        list = [];
        this.loaded.set(change.table, list);
      }
      list.push(change);
    }
    return tables;
  }

  /** Cuts a segment's torn last line off, and copies a segment with unreadable lines aside (both reported). */
  private async repair(path: string, content: ReturnType<typeof parseSharedSegment>): Promise<void> {
    const { logger } = this.options;
    if (content.tornBytes > 0) {
      await truncate(path, content.wholeBytes);
      logger.warn(
        { file: path, bytes: content.tornBytes },
        "state journal: cut off a torn last line (a write a crash interrupted; it was never acknowledged)",
      );
    }
    if (content.badLines.length > 0) {
      const copy = `${path}.corrupt-${fileStamp(this.now())}`;
      await copyFile(path, copy);
      this.report.corruptSegments.push(copy);
      logger.error(
        { file: path, lines: content.badLines, copy },
        "state journal: unreadable lines skipped; the segment was copied aside",
      );
    }
  }
}
