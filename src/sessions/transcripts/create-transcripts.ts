import { type FileHandle, unlink } from "node:fs/promises";
import path from "node:path";
import { ErrorCodes, SwitchboardError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { createKeyedMutex } from "../keyed-mutex.js";
import { createAppender } from "./append-line.js";
import { archiveTranscript, listTranscripts, statTranscript } from "./archive-transcript.js";
import { readHeader } from "./read-header.js";
import { readTail } from "./read-tail.js";
import { createRecentMessages } from "./recent-messages.js";
import { checkedMessageJson, newTranscriptHeader } from "./stored-transcript.js";
import { isToolMessage, type TranscriptMessage } from "./transcript-event.js";
import { transcriptFile } from "./transcript-path.js";
import type { Transcripts } from "./transcripts-port.js";

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

/** Messages a preview keeps per file, files kept, and the longest line a preview holds (longer: read from the file). */
const PREVIEW = { messages: 5, files: 20_000, maxLineBytes: 4_096 };

/** Messages {@link Transcripts.recent} keeps per file: the model's history of a turn is at most this many. */
const RECENT_MESSAGES = 200;

/** Bytes of lines {@link Transcripts.recent} keeps per file (a bigger tail is read each time) and in all (least recently used files dropped first). */
const RECENT_BYTES = { file: 1024 * 1024, total: 64 * 1024 * 1024 };

/** Resolved ids kept (then forgotten all at once). */
const RESOLVED_IDS = 50_000;

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

/** The local backend's transcripts: `<dir>/<transcript id>.jsonl` (JSONL), appended and read from the tail. */
export function createTranscripts(deps: TranscriptsDeps): Transcripts {
  const { logger, now = Date.now, chunkSize = DEFAULT_CHUNK_SIZE } = deps;
  if (!Number.isSafeInteger(chunkSize) || chunkSize < 1)
    throw invalid(`Invalid chunkSize ${chunkSize}: use a whole number of bytes, at least 1.`);
  const dir = path.resolve(deps.dir);
  const lock = createKeyedMutex(); // key: absolute file path
  // Ids resolved before (a turn resolves its transcript id several times); refused ids are not kept.
  const resolved = new Map<string, string>();
  function fileOf(id: string): string {
    let file = resolved.get(id);
    if (file === undefined) {
      file = transcriptFile(dir, id);
      if (resolved.size >= RESOLVED_IDS) resolved.clear();
      resolved.set(id, file);
    }
    return file;
  }
  /** The file of a transcript id, or of an archive's name (`<id>.jsonl.deleted.<time>`, which is no id). */
  function archiveOrFile(id: string): string {
    return id.includes(".jsonl.") ? path.join(dir, setAsideName(id)) : fileOf(id);
  }
  const inFlight = new Set<Promise<void>>(); // appends asked for and not settled yet
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

  /** Drops the messages kept in memory for `file`: the next read reads the file. */
  function dropKept(file: string): void {
    previews.delete(file);
    recent.removed(file);
    versions.set(file, (versions.get(file) ?? 0) + 1);
  }

  /** Drops what is kept for `file` (an open handle would follow it to a new name, or keep a deleted file alive). */
  async function forget(file: string): Promise<void> {
    await appender.forget(file);
    dropKept(file);
  }

  return {
    scope: dir,
    location: (id) => archiveOrFile(id),
    async append(id, message, options) {
      const file = fileOf(id);
      const nowMs = now();
      const { message: written, json } = checkedMessageJson(message, nowMs);
      // The same text as stringifying the whole event, without serializing the message a second time.
      const line = `{"type":"message","timestamp":"${new Date(nowMs).toISOString()}","message":${json}}`;
      const appended = lock.run(file, async () => {
        let began = false;
        const header = () => {
          began = true;
          return JSON.stringify(newTranscriptHeader(id, options, nowMs));
        };
        try {
          await appender.append(file, line, header);
        } catch (err) {
          recent.removed(file); // whatever reached the file, the next read finds it
          throw err;
        }
        notePreview(file, written, line);
        // A file this append began (new or empty) holds this message alone: the next turn need not read it.
        if (began) recent.put(file, recent.version(file), [], []);
        recent.appended(file, written, line.length);
      });
      inFlight.add(appended);
      appended.then(
        () => inFlight.delete(appended),
        () => inFlight.delete(appended),
      );
      await appended;
    },
    async readTail(id, options) {
      const file = archiveOrFile(id); // an archive reads too (`state migrate` copies archives)
      const snapshotSize = (handle: FileHandle) => lock.run(file, async () => (await handle.stat()).size);
      return readTail(file, options, { logger, chunkSize, snapshotSize });
    },
    async recent(id, limit) {
      // A limit out of range is read from the file, which also refuses a bad one.
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > RECENT_MESSAGES)
        return (await this.readTail(id, { limit, includeTools: true })).messages;
      const file = fileOf(id);
      const warm = recent.get(file, limit);
      if (warm) return warm;
      const version = recent.version(file);
      const { messages } = await this.readTail(id, { limit: RECENT_MESSAGES, includeTools: true });
      recent.put(
        file,
        version,
        messages,
        messages.map((m) => JSON.stringify(m).length),
      );
      return messages.slice(-limit);
    },
    async preview(id, limit) {
      const file = fileOf(id);
      if (limit > PREVIEW.messages) return (await this.readTail(id, { limit })).messages;
      let preview = previews.get(file);
      if (!preview) {
        const version = versions.get(file);
        const page = await this.readTail(id, { limit: PREVIEW.messages });
        preview = page.messages;
        const small = preview.every((m) => JSON.stringify(m).length <= PREVIEW.maxLineBytes);
        if (versions.get(file) === version && small) {
          if (previews.size >= PREVIEW.files) previews.delete(previews.keys().next().value!);
          previews.set(file, preview);
        }
      }
      return preview.slice(-limit);
    },
    async readHeader(id) {
      return readHeader(archiveOrFile(id), logger, chunkSize);
    },
    async remove(id, options) {
      const file = fileOf(id);
      return lock.run(file, async () => {
        await forget(file);
        const archived = await archiveTranscript(file, options?.now ?? now());
        return archived === undefined ? undefined : path.basename(archived);
      });
    },
    async purge(id) {
      const file = archiveOrFile(id);
      return lock.run(file, async () => {
        await forget(file);
        return unlink(file).then(
          () => true,
          (err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? false : Promise.reject(err)),
        );
      });
    },
    list: () => listTranscripts(dir),
    stat: (id) => statTranscript(fileOf(id)),
    forget: (id) => dropKept(fileOf(id)),
    async close() {
      // Appends already asked for finish first (they may not have reached their file yet).
      while (inFlight.size > 0) await Promise.allSettled(inFlight);
      await Promise.all(appender.openFiles().map((file) => lock.run(file, () => appender.forget(file))));
    },
  };
}
