/**
 * The transcripts port: the one way the core keeps a session's conversation. It speaks of
 * transcripts (named by a transcript id: the session id, or `<sessionId>-topic-<topic>`, see
 * `transcriptId`) and their events (messages, oldest first), never of files. Implementations: the
 * JSONL files of the local backend (`./create-transcripts.ts`), memory (`./memory-transcripts.ts`,
 * for unit tests) and PostgreSQL (`./postgres-transcripts.ts`); all pass
 * `test/contracts/transcripts-contract.ts`.
 *
 * A transcript is append-only: `/compact` appends a summary marker that stands in for what came
 * before (`src/agents/compaction-marker.ts`), a reset archives the transcript and a new one starts.
 */
import type { TranscriptHeader, TranscriptMessage, TranscriptMessageInput } from "./transcript-event.js";

/** Options of {@link Transcripts.readTail}. */
export interface ReadTailOptions {
  /** how many messages at most; a positive integer (callers clamp, e.g. 1000 for sessions_history) */
  limit: number;
  /** keep `toolCall` and `toolResult` messages; default false */
  includeTools?: boolean;
  /** from a previous page: return the messages before that page */
  cursor?: string;
}

/** A page of messages, oldest first, and how to get the page before it. */
export interface TranscriptPage {
  messages: TranscriptMessage[];
  /** set exactly when `hasMore`: pass it back to read the older page */
  cursor?: string;
  /** true when older messages (matching `includeTools`) exist before this page */
  hasMore: boolean;
}

/** Header fields for a transcript `append` creates. */
export interface AppendOptions {
  /** default: the session id in the transcript id */
  sessionId?: string;
  /** default: `process.cwd()` */
  cwd?: string;
  /** the parent transcript of a forked session */
  parentSession?: string;
  /** the canonical key of the session appending: PostgreSQL stores a transcript it creates under that session's partition */
  sessionKey?: string;
}

/** One transcript or archive, as {@link Transcripts.list} gives it. */
export interface TranscriptListing {
  /** a transcript id, or an archive's name: pass it to `purge` */
  id: string;
  /** when it was archived (ms); absent for a live transcript */
  archivedAt?: number;
  /** stored size in bytes (the events' JSON) */
  bytes: number;
  /** when it was last written (ms) */
  updatedAt: number;
}

/** The transcripts of one agent. */
export interface Transcripts {
  /** Transcripts with the same scope are the same ones (two agents may share a local folder). */
  readonly scope: string;
  /**
   * True when appends join the state port's commit (PostgreSQL): the appends and state writes made
   * in one synchronous step are one transaction. Otherwise an append is durable on its own.
   */
  readonly joinsStateCommit?: boolean;
  /** Where a person finds transcript `id` (local: its file; PostgreSQL: schema and key), for messages and listings. */
  location(id: string): string;
  /** Appends one message (timestamp defaults to now), in order per transcript; creates the transcript with its header. */
  append(id: string, message: TranscriptMessageInput, options?: AppendOptions): Promise<void>;
  /** The newest `limit` messages, or the page before `cursor`, oldest first (`id` may be an archive's name from `list`). */
  readTail(id: string, options: ReadTailOptions): Promise<TranscriptPage>;
  /**
   * The newest `limit` messages, tool messages included, exactly as
   * `readTail(id, { limit, includeTools: true })` gives them; an implementation may serve them
   * from memory (a warm session's turn then neither reads nor parses its transcript).
   */
  recent(id: string, limit: number): Promise<TranscriptMessage[]>;
  /** The newest `limit` messages without tool calls and results, as `readTail` gives them (may be cached). */
  preview(id: string, limit: number): Promise<TranscriptMessage[]>;
  /** The transcript's (or an archive's) header (session id, start, cwd, parent), or undefined when it does not exist. */
  readHeader(id: string): Promise<TranscriptHeader | undefined>;
  /** Archives the transcript (it stops being `id`; nothing is deleted); returns the archive's name, or undefined when missing. `sessionKey`: its session, whose partition's fence the write checks (PostgreSQL). */
  remove(id: string, options?: { now?: number; sessionKey?: string }): Promise<string | undefined>;
  /** Deletes a transcript or an archive (by the name `remove` or `list` gave) for good; false when missing. `sessionKey` as for `remove`. */
  purge(id: string, options?: { sessionKey?: string }): Promise<boolean>;
  /** Every transcript and archive of this scope. */
  list(): Promise<TranscriptListing[]>;
  /**
   * The archives of this scope and the transcripts no session points at, decided by storage from
   * every session stored (PostgreSQL: the sessions rows of the agent, whichever gateway owns them),
   * not from a gateway's image. Absent: the caller decides from the sessions it holds (local files:
   * one gateway holds them all).
   */
  unreferenced?(): Promise<TranscriptListing[]>;
  /** The listing of transcript `id` (live, not archived), or undefined when it does not exist. */
  stat(id: string): Promise<TranscriptListing | undefined>;
  /**
   * Drops what is kept in memory of transcript `id` (its newest messages, a preview): the next read
   * reads storage. A gateway calls it for the sessions it gives up (docs/scale-out.md "Partitions
   * adopted and evicted one by one"): another writes them meanwhile, and one coming back reads them fresh.
   */
  forget(id: string): void;
  /** Lets appends in flight finish and releases what is held open; later calls still work. The gateway calls it at stop. */
  close(): Promise<void>;
}
