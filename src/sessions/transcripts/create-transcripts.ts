import { type FileHandle, unlink } from "node:fs/promises";
import path from "node:path";
import { ErrorCodes, SwitchboardError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { createKeyedMutex } from "../keyed-mutex.js";
import { createAppender } from "./append-line.js";
import { archiveTranscript } from "./archive-transcript.js";
import { describeIssues } from "./parse-transcript-line.js";
import { readHeader } from "./read-header.js";
import { readTail, type ReadTailOptions, type TranscriptPage } from "./read-tail.js";
import { createRecentMessages } from "./recent-messages.js";
import { assertValidSessionId } from "./session-id.js";
import {
  TRANSCRIPT_VERSION,
  TranscriptMessageSchema,
  isToolMessage,
  type TranscriptHeader,
  type TranscriptMessage,
  type TranscriptMessageInput,
} from "./transcript-event.js";
import { parseTranscriptFileName, resolveTranscriptPath } from "./transcript-path.js";

/** What {@link createTranscripts} needs. */
export interface TranscriptsDeps {
  /** the folder holding the transcripts (next to the store) */
  dir: string;
  logger: Logger;
  /** clock in ms; default `Date.now` */
  now?: () => number;
  /** bytes read per step when reading backwards; default 64 KiB */
  chunkSize?: number;
  /** transcript files kept open for appends between turns; default 256 */
  maxOpenFiles?: number;
}

/** Header fields for a file `append` creates. */
interface AppendOptions {
  /** default: the session id in the file name */
  sessionId?: string;
  /** default: `process.cwd()` */
  cwd?: string;
  /** the parent transcript of a forked session */
  parentSession?: string;
}

/**
 * The JSONL transcripts of one folder. Every method takes `ref`: a file name ending in `.jsonl`
 * (see `transcriptFileName`, or an entry's `sessionFile`) or a bare session id; anything that
 * resolves outside the folder is refused.
 */
export interface Transcripts {
  readonly dir: string;
  /** The absolute path of `ref`. */
  pathOf(ref: string): string;
  /** Appends one message (timestamp defaults to now), serialized per file; returns the line's byte offset. */
  append(ref: string, message: TranscriptMessageInput, options?: AppendOptions): Promise<number>;
  /** The newest `limit` messages, or the page before `cursor`, oldest first. */
  readTail(ref: string, options: ReadTailOptions): Promise<TranscriptPage>;
  /**
   * The newest `limit` messages, tool messages included, exactly as
   * `readTail(ref, { limit, includeTools: true })` gives them: from memory once the file was read
   * (appends keep it up to date), so a warm session's turn neither opens nor parses its file. More
   * than {@link RECENT_MESSAGES} messages are read from the file.
   */
  recent(ref: string, limit: number): Promise<TranscriptMessage[]>;
  /**
   * The newest `limit` messages without tool calls and results, as `readTail` gives them, from a
   * small per-file preview kept up to date on append (the file is read once, on first use).
   */
  preview(ref: string, limit: number): Promise<TranscriptMessage[]>;
  /** The header line, or undefined when the file is missing or has none. */
  readHeader(ref: string): Promise<TranscriptHeader | undefined>;
  /** Renames the file to `<file>.deleted.<time>`; returns the new path, or undefined when missing. */
  remove(ref: string, options?: { now?: number }): Promise<string | undefined>;
  /** Deletes the file for good (`ref`, or the name of a set-aside file in the folder); false when missing. */
  purge(ref: string): Promise<boolean>;
  /**
   * Closes every file kept open for appends (after appends in flight finish); a later append opens
   * its file again. The gateway calls it at stop.
   */
  close(): Promise<void>;
}

/** Messages a preview keeps per file, files kept, and the longest line a preview holds (longer: read from the file). */
const PREVIEW = { messages: 5, files: 20_000, maxLineBytes: 4_096 };

/** Messages {@link Transcripts.recent} keeps per file: the model's history of a turn is at most this many. */
const RECENT_MESSAGES = 200;

/** Bytes of lines {@link Transcripts.recent} keeps per file (a bigger tail is read each time) and in all (least recently used files dropped first). */
const RECENT_BYTES = { file: 1024 * 1024, total: 64 * 1024 * 1024 };

/** Resolved refs kept (then forgotten all at once). */
const RESOLVED_REFS = 50_000;

/** Default bytes read per step when reading a transcript backwards. */
const DEFAULT_CHUNK_SIZE = 64 * 1024;

/** A file name inside the folder (no separators), as `purge` takes for set-aside files. */
function setAsideName(name: string): string {
  if (name !== path.basename(name) || name === "" || name === "." || name === "..")
    throw invalid(
      `Invalid transcript file name ${JSON.stringify(name)}: pass a file name inside the transcript folder.`,
    );
  return name;
}

function invalid(message: string): SwitchboardError {
  return new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, message);
}

/** Transcripts stored as `<dir>/<sessionId>[-topic-<id>].jsonl`, appended and read from the tail. */
export function createTranscripts(deps: TranscriptsDeps): Transcripts {
  const { logger, now = Date.now, chunkSize = DEFAULT_CHUNK_SIZE } = deps;
  if (!Number.isSafeInteger(chunkSize) || chunkSize < 1)
    throw invalid(`Invalid chunkSize ${chunkSize}: use a whole number of bytes, at least 1.`);
  const dir = path.resolve(deps.dir);
  const lock = createKeyedMutex(); // key: absolute file path
  // Refs resolved before (a turn resolves its transcript's ref several times); refused refs are not kept.
  const resolved = new Map<string, string>();
  function fileOf(ref: string): string {
    let file = resolved.get(ref);
    if (file === undefined) {
      file = resolveTranscriptPath(dir, ref);
      if (resolved.size >= RESOLVED_REFS) resolved.clear();
      resolved.set(ref, file);
    }
    return file;
  }
  const inFlight = new Set<Promise<number>>(); // appends asked for and not settled yet
  const appender = createAppender({ logger, ...(deps.maxOpenFiles !== undefined && { maxOpen: deps.maxOpenFiles }) });
  // Last messages per file (absolute path), oldest first; `version` counts appends so a read that raced one is not kept.
  const previews = new Map<string, TranscriptMessage[]>();
  const recent = createRecentMessages({
    messages: RECENT_MESSAGES,
    fileBytes: RECENT_BYTES.file,
    totalBytes: RECENT_BYTES.total,
  });
  const versions = new Map<string, number>();

  function notePreview(file: string, message: TranscriptMessage, line: string): void {
    versions.set(file, (versions.get(file) ?? 0) + 1);
    const preview = previews.get(file);
    if (!preview || isToolMessage(message)) return;
    if (line.length > PREVIEW.maxLineBytes) previews.delete(file);
    else {
      preview.push(message);
      if (preview.length > PREVIEW.messages) preview.shift();
    }
  }

  /** Drops what is kept for `file` (an open handle would follow it to a new name, or keep a deleted file alive). */
  async function forget(file: string): Promise<void> {
    await appender.forget(file);
    previews.delete(file);
    recent.removed(file);
    versions.set(file, (versions.get(file) ?? 0) + 1);
  }

  function headerLine(ref: string, options: AppendOptions | undefined, nowMs: number): string {
    // A bare id is the session id even when it looks like a topic file name ("a-topic-b").
    const sessionId =
      options?.sessionId ?? (ref.endsWith(".jsonl") ? parseTranscriptFileName(path.basename(ref))?.sessionId : ref);
    if (sessionId === undefined)
      throw invalid(`Cannot tell the session id of transcript ${JSON.stringify(ref)}: pass options.sessionId.`);
    const header: TranscriptHeader = {
      type: "session",
      version: TRANSCRIPT_VERSION,
      id: assertValidSessionId(sessionId),
      timestamp: new Date(nowMs).toISOString(),
      cwd: options?.cwd ?? process.cwd(),
      ...(options?.parentSession !== undefined ? { parentSession: options.parentSession } : {}),
    };
    return JSON.stringify(header);
  }

  function messageLine(input: TranscriptMessageInput, nowMs: number): string {
    const message = { ...input, timestamp: input.timestamp ?? nowMs };
    const checked = TranscriptMessageSchema.safeParse(message);
    if (!checked.success) throw invalid(`Invalid transcript message: ${describeIssues(checked.error.issues)}.`);
    try {
      return JSON.stringify({ type: "message", timestamp: new Date(nowMs).toISOString(), message });
    } catch (err) {
      throw invalid(`Transcript message is not serializable as JSON: ${(err as Error).message}.`);
    }
  }

  return {
    dir,
    pathOf: (ref) => fileOf(ref),
    async append(ref, message, options) {
      const file = fileOf(ref);
      const nowMs = now();
      const line = messageLine(message, nowMs);
      const appended = lock.run(file, async () => {
        let offset: number;
        try {
          offset = await appender.append(file, line, () => headerLine(ref, options, nowMs));
        } catch (err) {
          recent.removed(file); // whatever reached the file, the next read finds it
          throw err;
        }
        const written = (JSON.parse(line) as { message: TranscriptMessage }).message;
        notePreview(file, written, line);
        recent.appended(file, written, line.length);
        return offset;
      });
      inFlight.add(appended);
      appended.then(
        () => inFlight.delete(appended),
        () => inFlight.delete(appended),
      );
      return appended;
    },
    async readTail(ref, options) {
      const file = fileOf(ref);
      const snapshotSize = (handle: FileHandle) => lock.run(file, async () => (await handle.stat()).size);
      return readTail(file, options, { logger, chunkSize, snapshotSize });
    },
    async recent(ref, limit) {
      // A limit out of range is read from the file, which also refuses a bad one.
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > RECENT_MESSAGES)
        return (await this.readTail(ref, { limit, includeTools: true })).messages;
      const file = fileOf(ref);
      const warm = recent.get(file, limit);
      if (warm) return warm;
      const version = recent.version(file);
      const { messages } = await this.readTail(ref, { limit: RECENT_MESSAGES, includeTools: true });
      recent.put(
        file,
        version,
        messages,
        messages.map((m) => JSON.stringify(m).length),
      );
      return messages.slice(-limit);
    },
    async preview(ref, limit) {
      const file = fileOf(ref);
      if (limit > PREVIEW.messages) return (await this.readTail(ref, { limit })).messages;
      let preview = previews.get(file);
      if (!preview) {
        const version = versions.get(file);
        const page = await this.readTail(ref, { limit: PREVIEW.messages });
        preview = page.messages;
        const small = preview.every((m) => JSON.stringify(m).length <= PREVIEW.maxLineBytes);
        if (versions.get(file) === version && small) {
          if (previews.size >= PREVIEW.files) previews.delete(previews.keys().next().value!);
          previews.set(file, preview);
        }
      }
      return preview.slice(-limit);
    },
    async readHeader(ref) {
      return readHeader(fileOf(ref), logger, chunkSize);
    },
    async remove(ref, options) {
      const file = fileOf(ref);
      return lock.run(file, async () => {
        await forget(file);
        return archiveTranscript(file, options?.now ?? now());
      });
    },
    async purge(ref) {
      // A set-aside name (`<file>.jsonl.deleted.<time>`) is not a ref fileOf reads.
      const file = ref.includes(".jsonl.") ? path.join(dir, setAsideName(ref)) : fileOf(ref);
      return lock.run(file, async () => {
        await forget(file);
        return unlink(file).then(
          () => true,
          (err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? false : Promise.reject(err)),
        );
      });
    },
    async close() {
      // Appends already asked for finish first (they may not have reached their file yet).
      while (inFlight.size > 0) await Promise.allSettled(inFlight);
      await Promise.all(appender.openFiles().map((file) => lock.run(file, () => appender.forget(file))));
    },
  };
}
