import { randomUUID } from "node:crypto";
import { readFile, unlink } from "node:fs/promises";
import { SwitchboardError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import type { StatePort } from "../state/state-port.js";
import {
  InboxRowSchema,
  type InboxRow,
  type PendingInbound,
  type PendingRow,
  type SetAsideInbound,
  type SetAsideRow,
  entryOf,
  isLocalId,
  localId,
  setAsideOf,
} from "./inbox-rows.js";

export type { PendingInbound, SetAsideInbound } from "./inbox-rows.js";

/** `channel:account:chat:messageId`, or undefined when the platform gave no message id. */
export function inboundDedupeKey(message: InboundMessage): string | undefined {
  if (!message.messageId) return undefined;
  return [message.channel, message.accountId, message.chat.id, message.messageId].join(":");
}

/** What {@link Inbox.claim} found. */
export type InboxClaim =
  | { status: "new"; entry: PendingInbound }
  /** the same message is stored and not yet handled: it is that entry, answered once */
  | { status: "pending"; entry: PendingInbound }
  /** handled before */
  | { status: "done" };

/** The inbox could not store a message: the adapter must not acknowledge it to the platform. */
export class InboxWriteError extends SwitchboardError {
  constructor(cause: unknown) {
    super("STORAGE_FAILED", `the inbound message could not be stored: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
    this.name = "InboxWriteError";
  }
}

/** Dependencies of {@link createInbox}. */
export interface InboxDeps {
  /** where the inbox's table is kept */
  state: StatePort;
  /** e.g. `$SWITCHBOARD_HOME/state/inbox.json` */
  path: string;
  /** the dedupe file of earlier versions (`state/inbound-dedupe.json`): its keys are imported once, then it is removed */
  legacyDedupePath?: string;
  logger: Logger;
  now?: () => number;
  /** how long a handled message's key is remembered; default 7 days */
  retentionMs?: number;
  /** at most this many handled keys are remembered; default 50,000 */
  maxKeys?: number;
}

/**
 * The durable inbox: every inbound message is stored (with its dedupe key) in one acknowledged
 * write before the platform is told it arrived, and marked done when its turn has committed.
 * Messages still pending at start are replayed, oldest first; a repeat of a stored message is the
 * same entry, never a second turn.
 */
export async function createInbox(deps: InboxDeps) {
  const now = deps.now ?? Date.now;
  const retentionMs = deps.retentionMs ?? 7 * 24 * 3_600_000;
  const maxKeys = deps.maxKeys ?? 50_000;
  const rows = await deps.state.table<InboxRow>({
    name: "inbox",
    path: deps.path,
    what: "inbox",
    keyField: "id",
    invalidRows: "drop",
    check(_id, row) {
      const parsed = InboxRowSchema.safeParse(row);
      return parsed.success ? { value: parsed.data } : { error: parsed.error.message };
    },
  });
  const pending = new Map<string, PendingInbound>();
  const setAside = new Map<string, SetAsideInbound>();
  // Handled keys in the order they were handled (oldest first), so pruning stops at the first young one.
  const done = new Map<string, number>();
  let nextSeq = 0;

  for (const [id, row] of rows.entries()) {
    if (row.status === "done") done.set(id, row.at);
    else {
      if (row.status === "pending") pending.set(id, entryOf(id, row));
      else setAside.set(id, setAsideOf(id, row));
      nextSeq = Math.max(nextSeq, row.seq + 1);
    }
  }
  {
    const sorted = [...done].sort((a, b) => a[1] - b[1]);
    done.clear();
    for (const [id, at] of sorted) done.set(id, at);
  }
  if (deps.legacyDedupePath) await importLegacy(deps.legacyDedupePath);

  async function importLegacy(file: string): Promise<void> {
    let legacy: Record<string, unknown>;
    try {
      legacy = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
      deps.logger.warn({ file, err }, "earlier dedupe file unreadable; not imported");
      return;
    }
    const writes: Promise<void>[] = [];
    for (const [key, at] of Object.entries(legacy).sort((a, b) => Number(a[1]) - Number(b[1]))) {
      if (typeof at === "number" && !rows.has(key)) {
        done.set(key, at);
        writes.push(rows.set(key, { status: "done", at }));
      }
    }
    await Promise.all(writes);
    await unlink(file);
    deps.logger.info({ file, into: deps.path }, "imported the earlier dedupe file into the inbox");
  }

  /** Forgets handled keys past the retention window, then the oldest beyond `maxKeys`. */
  function prune(): void {
    const cutoff = now() - retentionMs;
    for (const [key, at] of done) {
      if (at >= cutoff && done.size <= maxKeys) break;
      done.delete(key);
      void rows.delete(key); // a lost deletion only keeps a dedupe key longer
    }
  }

  // A reader in another process (the CLI) writes nothing.
  if (!deps.state.readOnly) prune();
  let prunedAt = now();

  /** The stored fields of an entry (without its status). */
  function rowOf(entry: PendingInbound): Omit<PendingRow, "status"> {
    return {
      seq: entry.seq,
      runId: entry.runId,
      receivedAt: entry.receivedAt,
      message: entry.message,
      starts: entry.starts,
      ...(entry.sessionKey !== undefined && { sessionKey: entry.sessionKey }),
      ...(entry.interactive && { interactive: entry.interactive }),
    };
  }

  async function persist(write: Promise<void>): Promise<void> {
    try {
      await write;
    } catch (err) {
      throw new InboxWriteError(err);
    }
  }

  return {
    path: deps.path,

    /**
     * Stores `message` under its dedupe key unless that key is known; settles once on disk.
     * Rejects with {@link InboxWriteError} when it could not be stored.
     */
    async claim(
      dedupeKey: string | undefined,
      message: InboundMessage,
      options: { sessionKey?: string; runId?: string; interactive?: boolean } = {},
    ): Promise<InboxClaim> {
      const handledAt = dedupeKey === undefined ? undefined : done.get(dedupeKey);
      if (handledAt !== undefined && handledAt >= now() - retentionMs) return { status: "done" };
      // A set-aside message waits for its owner; a redelivery of it is not a second turn.
      if (dedupeKey !== undefined && setAside.has(dedupeKey)) return { status: "done" };
      const stored = dedupeKey === undefined ? undefined : pending.get(dedupeKey);
      if (stored) {
        // Acknowledged only once the first copy is on disk too; if that copy failed to store, this one is new.
        await persist(rows.flush());
        if (pending.get(dedupeKey!) !== stored && !rows.has(dedupeKey!)) return this.claim(dedupeKey, message, options);
        return { status: "pending", entry: stored };
      }
      const id = dedupeKey ?? localId(randomUUID());
      const { raw: _raw, ...fields } = message;
      const row: PendingRow = {
        status: "pending",
        seq: nextSeq++,
        runId: options.runId ?? randomUUID(),
        receivedAt: now(),
        message: fields,
        // The handling that begins now is its first start.
        starts: 1,
        ...(options.sessionKey !== undefined && { sessionKey: options.sessionKey }),
        ...(options.interactive && { interactive: true as const }),
      };
      done.delete(id);
      const write = rows.set(id, row);
      const entry = entryOf(id, row);
      pending.set(id, entry);
      try {
        await persist(write);
      } catch (err) {
        // Not stored, so not ours: a redelivery must find no entry and be handled as new.
        if (pending.get(id) === entry) {
          pending.delete(id);
          void rows.delete(id); // in memory at once; on disk the row never made it
        }
        throw err;
      }
      return { status: "new", entry };
    },

    /** Marks a stored message handled (its turn committed, or it was ignored or answered by a command). */
    async complete(id: string): Promise<void> {
      if (!pending.delete(id)) return;
      let write: Promise<void>;
      if (isLocalId(id)) write = rows.delete(id);
      else {
        const at = now();
        done.set(id, at);
        write = rows.set(id, { status: "done", at });
      }
      if (now() - prunedAt >= Math.min(retentionMs, 3_600_000) || done.size > maxKeys) {
        prune();
        prunedAt = now();
      }
      await write;
    },

    /** Messages stored but not yet handled, oldest first. */
    pending(): PendingInbound[] {
      return [...pending.values()].sort((a, b) => a.seq - b.seq);
    },

    /** Counts one more start of a stored message's turn; settles once the count is on disk. */
    async recordStart(id: string): Promise<void> {
      const entry = pending.get(id);
      if (!entry) return;
      entry.starts++;
      await persist(rows.set(id, { ...rowOf(entry), status: "pending" }));
    },

    /**
     * At a graceful stop: the start of every message still pending was interrupted by the stop, not
     * by a crash, so it is taken back (a long turn cut off by two restarts is never set aside).
     */
    async forgiveInterruptedStarts(): Promise<void> {
      const writes: Promise<void>[] = [];
      for (const [id, entry] of pending) {
        if (entry.starts === 0) continue;
        entry.starts--;
        writes.push(rows.set(id, { ...rowOf(entry), status: "pending" }));
      }
      await persist(Promise.all(writes).then(() => undefined));
    },

    /** Sets a pending message aside (never replayed until {@link retry}); settles once on disk. */
    async setAside(id: string, why: { reason: string; session?: string }): Promise<SetAsideInbound | undefined> {
      const entry = pending.get(id);
      if (!entry) return undefined;
      const row: SetAsideRow = { ...rowOf(entry), status: "set-aside", reason: why.reason, at: now() };
      if (why.session !== undefined) row.session = why.session;
      pending.delete(id);
      const kept = setAsideOf(id, row);
      setAside.set(id, kept);
      await persist(rows.set(id, row));
      return kept;
    },

    /** Messages set aside, oldest first. */
    listSetAside(): SetAsideInbound[] {
      return [...setAside.values()].sort((a, b) => a.seq - b.seq);
    },

    /** Makes a set-aside message pending again with no starts counted; undefined when there is none. */
    async retry(id: string): Promise<PendingInbound | undefined> {
      const kept = setAside.get(id);
      if (!kept) return undefined;
      const entry = entryOf(id, { ...rowOf(kept), status: "pending", starts: 0 });
      setAside.delete(id);
      pending.set(id, entry);
      await persist(rows.set(id, { ...rowOf(entry), status: "pending" }));
      return entry;
    },

    /** Forgets a set-aside message (its dedupe key is kept like a handled one's); false when there is none. */
    async drop(id: string): Promise<boolean> {
      const kept = setAside.get(id);
      if (!kept) return false;
      setAside.delete(id);
      pending.set(id, entryOf(id, { ...rowOf(kept), status: "pending" }));
      await this.complete(id);
      return true;
    },

    /** Settles when every change made so far is on disk. */
    flush: () => rows.flush(),

    /** Flushes and writes `inbox.json` in full. */
    close: () => rows.close(),
  };
}

/** The durable inbox. */
export type Inbox = Awaited<ReturnType<typeof createInbox>>;
