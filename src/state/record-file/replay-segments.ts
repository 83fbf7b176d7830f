import { copyFile, readFile, truncate } from "node:fs/promises";
import type { Logger } from "../../logger.js";
import { fileStamp } from "../atomic-json-file.js";
import type { WrittenSegment } from "./journal.js";
import { type SegmentContent, listSegments, parseSegment } from "./journal-segments.js";

/** A change read back from a journal: the row's after-image, or its deletion. */
export type ReplayedChange = SegmentContent["changes"][number];

/** What {@link replaySegments} needs from the record file it fills. */
export interface ReplayContext {
  /** the snapshot file; its own segments are `<path>.journal.<n>` */
  path: string;
  what: string;
  readOnly: boolean;
  logger: Logger;
  now: () => number;
  /** copies of segments with unreadable lines are listed here */
  corruptSegments: string[];
}

/** One segment as replayed: its number, its highest sequence number, and whether lines were unreadable. */
export type ReplayedSegment = WrittenSegment & { corrupt: boolean };

/** Applies every journal change past `afterSeq` with `apply`, segment by segment; returns what each segment held. */
export async function replaySegments(
  context: ReplayContext,
  afterSeq: number,
  apply: (change: ReplayedChange) => void,
): Promise<ReplayedSegment[]> {
  const found: ReplayedSegment[] = [];
  for (const segment of await listSegments(context.path)) {
    const buffer = await readFile(segment.path).catch((err: NodeJS.ErrnoException) => {
      // A writer's snapshot removed it while this read-only reader was listing: its changes are in the snapshot.
      if (err.code === "ENOENT" && context.readOnly) return undefined;
      throw err;
    });
    if (!buffer) continue;
    const content = parseSegment(buffer);
    let maxSeq = -1;
    for (const change of content.changes) {
      maxSeq = Math.max(maxSeq, change.seq);
      if (change.seq > afterSeq) apply(change);
    }
    const corrupt = content.badLines.length > 0;
    if (!context.readOnly) await repairSegment(context, segment.path, content);
    found.push({ number: segment.number, maxSeq, corrupt });
  }
  return found;
}

/** Cuts off a torn last line and copies a segment with unreadable lines aside (a writer only). */
async function repairSegment(context: ReplayContext, file: string, content: SegmentContent): Promise<void> {
  if (content.tornBytes > 0) {
    // A line without its newline was never acknowledged: cut it off.
    await truncate(file, content.wholeBytes);
    context.logger.warn(
      { file, bytes: content.tornBytes },
      `${context.what}: cut off a torn last journal line (a write a crash interrupted; it was never acknowledged)`,
    );
  }
  if (content.badLines.length === 0) return;
  const copy = `${file}.corrupt-${fileStamp(context.now())}`;
  await copyFile(file, copy);
  context.corruptSegments.push(copy);
  context.logger.error(
    { file, lines: content.badLines, copy },
    `${context.what}: unreadable journal lines skipped; the segment was copied aside`,
  );
}
