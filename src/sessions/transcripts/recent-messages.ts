import type { TranscriptMessage } from "./transcript-event.js";

/** How much {@link createRecentMessages} keeps: messages per file, bytes per file, bytes in all. */
export interface RecentLimits {
  messages: number;
  fileBytes: number;
  totalBytes: number;
}

/** One file's newest messages, oldest first, with the length of each one's line. */
interface Recent {
  messages: TranscriptMessage[];
  sizes: number[];
  bytes: number;
}

/**
 * The newest messages of each transcript (tool messages included), kept in memory once read and
 * updated on every append, so a warm session's turn neither opens nor parses its file. Files are
 * dropped least recently used first past `totalBytes`; a file whose newest messages take more than
 * `fileBytes` is not kept (it is read each time). `changed` counts appends and removals per file,
 * so a read that raced one is not kept.
 */
export function createRecentMessages(limits: RecentLimits) {
  const files = new Map<string, Recent>(); // least recently used first
  const changes = new Map<string, number>();
  let total = 0;

  function drop(file: string): void {
    const recent = files.get(file);
    if (!recent) return;
    total -= recent.bytes;
    files.delete(file);
  }

  function trim(): void {
    for (const file of files.keys()) {
      if (total <= limits.totalBytes) break;
      drop(file);
    }
  }

  function changed(file: string): void {
    changes.set(file, (changes.get(file) ?? 0) + 1);
  }

  return {
    /** The change count to pass to {@link put} with a read started now. */
    version: (file: string): number => changes.get(file) ?? 0,

    /** The newest `limit` messages of a warm file, oldest first (a new array); undefined when cold. */
    get(file: string, limit: number): TranscriptMessage[] | undefined {
      const recent = files.get(file);
      if (!recent) return undefined;
      files.delete(file);
      files.set(file, recent);
      return recent.messages.slice(-limit);
    },

    /**
     * Keeps what a read of the file found: its newest `limits.messages` messages (all of them when
     * the file has fewer) and their line lengths; ignored when an append or a removal came after
     * `version`, or when they are too big to keep.
     */
    put(file: string, version: number, messages: TranscriptMessage[], sizes: number[]): void {
      if ((changes.get(file) ?? 0) !== version) return;
      const bytes = sizes.reduce((sum, size) => sum + size, 0);
      if (bytes > limits.fileBytes) return;
      drop(file);
      files.set(file, { messages, sizes, bytes });
      total += bytes;
      trim();
    },

    /** A line was appended to `file`. */
    appended(file: string, message: TranscriptMessage, lineBytes: number): void {
      changed(file);
      const recent = files.get(file);
      if (!recent) return;
      recent.messages.push(message);
      recent.sizes.push(lineBytes);
      recent.bytes += lineBytes;
      total += lineBytes;
      while (recent.messages.length > limits.messages) {
        recent.messages.shift();
        const size = recent.sizes.shift()!;
        recent.bytes -= size;
        total -= size;
      }
      if (recent.bytes > limits.fileBytes) drop(file);
      else trim();
    },

    /** `file` was set aside or rewritten: read it again next time. */
    removed(file: string): void {
      changed(file);
      drop(file);
    },
  };
}
