import { writeSync } from "node:fs";
import { type FileHandle, mkdir, open } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../../logger.js";
import { removeSegment, segmentPath, syncFolder } from "./journal-segments.js";

/** A promise settled from outside; a rejection nobody awaits is never reported as unhandled. */
export interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Creates a {@link Deferred}. Callers that do not await a change must not turn a failed write into an unhandled rejection. */
export function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

interface Batch {
  lines: string[];
  /** highest sequence number in the batch */
  maxSeq: number;
  /** shared journal: the highest sequence number per table in the batch */
  tables: Map<string, number>;
  settled: Deferred;
}

function newBatch(): Batch {
  return { lines: [], maxSeq: -1, tables: new Map(), settled: deferred() };
}

/** A segment this process wrote, and the highest sequence number in it. */
export interface WrittenSegment {
  number: number;
  maxSeq: number;
  /** shared journal: the highest sequence number per table written to this segment */
  tables?: Map<string, number>;
}

/** How long an idle journal keeps its segment open before giving the descriptor back. */
const RELEASE_AFTER_IDLE_MS = 2_000;

/**
 * The append-only journal of one record file, with group commit: lines queued while a write runs
 * go out together in the next write, followed by one `fdatasync`, and every waiter of that batch
 * is resolved at once. A change is acknowledged only when its line is on disk.
 */
export class Journal {
  private open: Batch = newBatch();
  private running: Promise<void> | undefined;
  private handle: FileHandle | undefined;
  private segment: WrittenSegment | undefined;
  private size = 0;
  private rotateRequested = false;
  private releaseTimer: NodeJS.Timeout | undefined;
  /** segments this process finished, oldest first; the snapshot deletes those it covers */
  readonly finished: WrittenSegment[] = [];
  /** bytes appended since the last snapshot started */
  bytesSinceSnapshot = 0;

  constructor(
    private readonly file: string,
    private nextSegment: number,
    private readonly logger: Logger,
    /** a line written first in every new segment (the shared journal's id) */
    private readonly header?: string,
    /** told how long each batch's write and sync took, in seconds (metrics) */
    private readonly onSync?: (seconds: number) => void,
  ) {}

  /**
   * Queues one line (without newline) carrying sequence number `seq` (changing `tables`, in a shared
   * journal); settles once it is on disk.
   */
  append(line: string, seq: number, tables?: Iterable<string>): Promise<void> {
    const batch = this.open;
    batch.lines.push(line);
    batch.maxSeq = seq;
    if (tables) for (const table of tables) batch.tables.set(table, seq);
    if (!this.running) this.running = this.drain();
    return batch.settled.promise;
  }

  /** Later lines go to a new segment, so the segments before it can be deleted once a snapshot covers them. */
  rotate(): void {
    this.rotateRequested = true;
  }

  /** Deletes the finished segments a snapshot at sequence number `seq` covers. */
  async dropCovered(seq: number): Promise<void> {
    for (const segment of this.finished.filter((s) => s.maxSeq <= seq)) {
      await removeSegment(this.file, segment.number);
      this.finished.splice(this.finished.indexOf(segment), 1);
    }
  }

  /** Settles when every line queued so far has been written (or has failed). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Writes what is queued and closes the current segment (a later line opens a new one). */
  async close(): Promise<void> {
    await this.idle();
    await this.closeSegment();
  }

  /** The segment being appended to, if any. */
  current(): WrittenSegment | undefined {
    return this.segment;
  }

  private async drain(): Promise<void> {
    clearTimeout(this.releaseTimer);
    // Let every change made in this turn of the event loop (the synchronous burst and the promise
    // chains it starts) join the first batch: one write and one sync for all of them.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.open.lines.length > 0) {
      const batch = this.open;
      this.open = newBatch();
      try {
        await this.write(batch);
        batch.settled.resolve();
      } catch (err) {
        batch.settled.reject(err);
      }
    }
    this.running = undefined;
    // Idle: keep the segment open for the next change, but give the descriptor back after a while
    // (a store dropped without close must not leak it). The timer never keeps the process alive.
    if (this.handle) {
      this.releaseTimer = setTimeout(() => {
        if (!this.running) void this.release();
      }, RELEASE_AFTER_IDLE_MS);
      this.releaseTimer.unref();
    }
  }

  private async release(): Promise<void> {
    clearTimeout(this.releaseTimer);
    const handle = this.handle;
    this.handle = undefined;
    await handle
      ?.close()
      .catch((err: unknown) => this.logger.warn({ file: this.file, err }, "could not close a journal segment"));
  }

  private async write(batch: Batch): Promise<void> {
    if (this.rotateRequested) {
      this.rotateRequested = false;
      await this.closeSegment();
    }
    const handle = this.handle ?? (await this.openSegment());
    this.handle = handle;
    const start = this.size;
    const text = `${start === 0 && this.header ? `${this.header}\n` : ""}${batch.lines.join("\n")}\n`;
    const started = performance.now();
    try {
      const bytes = Buffer.from(text, "utf8");
      // The write goes into the page cache at once (no thread-pool round trip for it); the sync that
      // makes it durable is what takes time, and runs on the thread pool.
      let written = 0;
      while (written < bytes.length)
        written += writeSync(handle.fd, bytes, written, bytes.length - written, start + written);
      await handle.datasync();
      this.onSync?.((performance.now() - started) / 1000);
      this.size = start + bytes.length;
      this.bytesSinceSnapshot += bytes.length;
      const segment = this.segment!;
      segment.maxSeq = batch.maxSeq;
      if (batch.tables.size > 0) {
        segment.tables ??= new Map();
        for (const [table, seq] of batch.tables) segment.tables.set(table, seq);
      }
    } catch (err) {
      // Never leave half a batch in front of later lines: cut it off, or start a new segment.
      await handle.truncate(start).catch(async (cutErr: unknown) => {
        this.logger.error(
          { file: this.file, err: cutErr },
          "could not cut a failed journal write; starting a new segment",
        );
        await this.closeSegment();
      });
      throw err;
    }
  }

  private async openSegment(): Promise<FileHandle> {
    if (this.segment) return open(segmentPath(this.file, this.segment.number), "r+");
    const number = this.nextSegment++;
    await mkdir(path.dirname(this.file), { recursive: true });
    const handle = await open(segmentPath(this.file, number), "wx", 0o600);
    // The new file's name must survive a power loss before anything in it is acknowledged.
    await syncFolder(this.file);
    this.size = 0;
    this.segment = { number, maxSeq: -1 };
    return handle;
  }

  private async closeSegment(): Promise<void> {
    const segment = this.segment;
    this.segment = undefined;
    await this.release();
    if (segment) this.finished.push(segment);
  }
}
