import { randomUUID } from "node:crypto";
import type { StoredTurn } from "../agents/stored-turn.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import type { AnsweredOutcome } from "../commands/command-context.js";
import type { AccessDecision } from "./access.js";
import {
  type DoneRow,
  type PendingInbound,
  type PendingRow,
  type SetAsideInbound,
  type SetAsideRow,
  entryOf,
  isLocalId,
  localId,
  sessionOfEntry,
  setAsideOf,
} from "./inbox-rows.js";
import { type InboxDeps, type InboxState, importLegacy, openInboxState, persist, prune, rowOf } from "./inbox-state.js";
import { type ForwardClaim, forwardIfAway } from "./inbox-forward.js";

export type { PendingInbound, SetAsideInbound } from "./inbox-rows.js";
export { type InboxDeps, InboxWriteError } from "./inbox-state.js";

/** `channel:account:chat:messageId`, or undefined when the platform gave no message id. */
export function inboundDedupeKey(message: InboundMessage): string | undefined {
  if (!message.messageId) return undefined;
  return [message.channel, message.accountId, message.chat.id, message.messageId].join(":");
}

/** Which sessions' entries a call is about (an evict's: those of its partitions). */
type SessionFilter = (sessionKey: string | undefined) => boolean;
/** What {@link Inbox.claim} found. */
export type InboxClaim =
  | { status: "new"; entry: PendingInbound }
  /** the same message is stored and not yet handled: it is that entry, answered once */
  | { status: "pending"; entry: PendingInbound }
  /** handled before (a stored turn's answer names its first run) */
  | { status: "done"; runId?: string; sessionKey?: string }
  /** its session's partition is held by another gateway: stored for it (./inbox-forward.ts); nothing runs here */
  | Extract<ForwardClaim, { status: "forwarded" }>;

/** How a message is claimed: the session a client chose or the routing table gave it, its run id, a native command's interaction. */
type ClaimOptions = {
  sessionKey?: string | undefined;
  session?: string | undefined;
  runId?: string | undefined;
  interactive?: boolean;
  /** `cluster.owners: "many"`: the receiving gateway's access decision, and the outcome of a `/pair` it ran */
  access?: AccessDecision | undefined;
  outcome?: AnsweredOutcome | undefined;
};

/** What an entry holds: a platform message (without `raw`) or a turn a hook, client or tool started. */
type Content = { message: Record<string, unknown> } | { startedTurn: StoredTurn };

/** Stores a message not seen before; settles once on disk, else forgets it (a redelivery is then new). */
async function storeNew(s: InboxState, dedupeKey: string | undefined, content: Content, options: ClaimOptions) {
  const id = dedupeKey ?? localId(randomUUID());
  const row: PendingRow = {
    status: "pending",
    seq: s.nextSeq++,
    runId: options.runId ?? randomUUID(),
    receivedAt: s.now(),
    ...content,
    // The handling that begins now is its first start.
    starts: 1,
    ...(options.sessionKey !== undefined && { sessionKey: options.sessionKey }),
    ...(options.session !== undefined && { session: options.session }),
    ...(options.interactive && { interactive: true as const }),
    ...(options.access && { access: options.access }),
    ...(options.outcome && { outcome: options.outcome }),
  };
  s.done.delete(id);
  const write = s.rows.set(id, row);
  const entry = entryOf(id, row);
  s.pending.set(id, entry);
  try {
    await persist(write);
  } catch (err) {
    // Not stored, so not ours: a redelivery must find no entry and be handled as new.
    if (s.pending.get(id) === entry) {
      s.pending.delete(id);
      void s.rows.delete(id); // in memory at once; on disk the row never made it
    }
    throw err;
  }
  return { status: "new" as const, entry };
}

/** A handled key's answer: a stored turn's names its first run. */
function handled(row: DoneRow | undefined): InboxClaim {
  return {
    status: "done",
    ...(row?.runId && { runId: row.runId }),
    ...(row?.sessionKey && { sessionKey: row.sessionKey }),
  };
}

/** Stores `content` under its dedupe key unless that key is known; settles once on disk. */
async function claim(
  s: InboxState,
  dedupeKey: string | undefined,
  content: Content,
  options: ClaimOptions = {},
): Promise<InboxClaim> {
  const away = forwardIfAway(s.deps, dedupeKey, { content, ...options });
  if (away) return away;
  if (dedupeKey === undefined) return storeNew(s, dedupeKey, content, options);
  const handledAt = s.done.get(dedupeKey);
  if (handledAt !== undefined && handledAt >= s.now() - s.retentionMs) {
    const row = s.rows.get(dedupeKey);
    return handled(row?.status === "done" ? row : undefined);
  }
  // A set-aside message waits for its owner; a redelivery of it is not a second turn.
  const kept = s.setAside.get(dedupeKey);
  if (kept)
    return handled(
      kept.startedTurn && {
        status: "done",
        at: kept.setAsideAt,
        runId: kept.runId,
        sessionKey: kept.startedTurn.sessionKey,
      },
    );
  const stored = s.pending.get(dedupeKey);
  if (!stored) return storeNew(s, dedupeKey, content, options);
  // Acknowledged only once the first copy is on disk too; if that copy failed to store, this one is new.
  await persist(s.rows.flush());
  if (s.pending.get(dedupeKey) !== stored && !s.rows.has(dedupeKey)) return claim(s, dedupeKey, content, options);
  return { status: "pending", entry: stored };
}

/** Marks a stored message handled (its turn committed, or it was ignored or answered by a command). */
async function complete(s: InboxState, id: string): Promise<void> {
  const entry = s.pending.get(id);
  if (!entry) return;
  s.pending.delete(id);
  let write: Promise<void>;
  if (isLocalId(id)) write = s.rows.delete(id);
  else {
    const at = s.now();
    s.done.set(id, at);
    // Its session kept: the row stays in the partition it was stored in.
    const session = sessionOfEntry(entry);
    write = s.rows.set(id, {
      status: "done",
      at,
      ...(entry.startedTurn && { runId: entry.runId, sessionKey: entry.sessionKey }),
      ...(session !== undefined && { session }),
    });
  }
  if (s.now() - s.prunedAt >= Math.min(s.retentionMs, 3_600_000) || s.done.size > s.maxKeys) prune(s);
  await write;
}

/** Writes a pending entry's row again (its start count changed). */
const rewrite = (s: InboxState, id: string, entry: PendingInbound) =>
  s.rows.set(id, { ...rowOf(entry), status: "pending" });

/** Sets a pending message aside (never replayed until retried); settles once on disk. */
async function setAside(s: InboxState, id: string, why: { reason: string; session?: string }) {
  const entry = s.pending.get(id);
  if (!entry) return undefined;
  const row: SetAsideRow = { ...rowOf(entry), status: "set-aside", reason: why.reason, at: s.now() };
  if (why.session !== undefined) row.session = why.session;
  s.pending.delete(id);
  const kept = setAsideOf(id, row);
  s.setAside.set(id, kept);
  await persist(s.rows.set(id, row));
  return kept;
}

/** Makes a set-aside message pending again with no starts counted; undefined when there is none. */
async function retry(s: InboxState, id: string): Promise<PendingInbound | undefined> {
  const kept = s.setAside.get(id);
  if (!kept) return undefined;
  const entry = entryOf(id, { ...rowOf(kept), status: "pending", starts: 0 });
  s.setAside.delete(id);
  s.pending.set(id, entry);
  await persist(rewrite(s, id, entry));
  return entry;
}

/** Forgets a set-aside message (its dedupe key is kept like a handled one's); false when there is none. */
async function drop(s: InboxState, id: string): Promise<boolean> {
  const kept = s.setAside.get(id);
  if (!kept) return false;
  s.setAside.delete(id);
  s.pending.set(id, entryOf(id, { ...rowOf(kept), status: "pending" }));
  await complete(s, id);
  return true;
}

/** At a graceful stop (an evict's cut: `only` its sessions) each pending start was cut, not a crash: taken back. */
async function forgiveInterruptedStarts(s: InboxState, only?: SessionFilter): Promise<void> {
  const writes: Promise<void>[] = [];
  for (const [id, entry] of s.pending) {
    if (entry.starts === 0 || (only && !only(sessionOfEntry(entry)))) continue;
    entry.starts--;
    writes.push(rewrite(s, id, entry));
  }
  await persist(Promise.all(writes).then(() => undefined));
}

/** Counts one more start of a stored message's turn; settles once the count is on disk. */
async function recordStart(s: InboxState, id: string): Promise<void> {
  const entry = s.pending.get(id);
  if (!entry) return;
  entry.starts++;
  await persist(rewrite(s, id, entry));
}

/**
 * Ties pending messages to the run of the turn that answers them (a collected or steered turn), in
 * one commit; settles once on disk. A replay then runs them together, under that run id.
 */
async function bind(s: InboxState, ids: string[], runId: string): Promise<void> {
  const tied = ids.flatMap((id) => {
    const entry = s.pending.get(id);
    return entry ? [[id, entry] as const] : [];
  });
  const writes: Promise<void>[] = [];
  await persist(
    s.deps.state.commit(() => {
      for (const [id, entry] of tied) {
        entry.turn = runId;
        writes.push(rewrite(s, id, entry));
      }
    }),
  );
  await persist(Promise.all(writes).then(() => undefined));
}

/**
 * The durable inbox: every inbound message is stored (with its dedupe key) in one acknowledged
 * write before the platform is told it arrived, and marked done when its turn has committed.
 * Messages still pending at start are replayed, oldest first; a repeat of a stored message is the
 * same entry, never a second turn. Writes reject with `InboxWriteError` when they could not be stored.
 */
export async function createInbox(deps: InboxDeps) {
  const s = await openInboxState(deps);
  if (deps.legacyDedupePath) await importLegacy(s, deps.legacyDedupePath);
  // A reader in another process (the CLI) writes nothing.
  if (!deps.state.readOnly) prune(s);
  return {
    path: deps.path,
    claim: (dedupeKey: string | undefined, message: InboundMessage, options?: ClaimOptions) => {
      const { raw: _raw, ...fields } = message;
      return claim(s, dedupeKey, { message: fields }, options);
    },
    /** Stores a turn a hook, a gateway client or a tool started, like a message: in its session, under its dedupe key. */
    claimTurn: (dedupeKey: string | undefined, turn: StoredTurn, options: { runId?: string | undefined } = {}) =>
      claim(s, dedupeKey, { startedTurn: turn }, { ...options, sessionKey: turn.sessionKey }),
    complete: (id: string) => complete(s, id),
    /** True when another gateway holds the partition of `sessionKey`: its entries are forwarded there, not stored here. */
    heldElsewhere: (sessionKey: string): boolean =>
      s.deps.forward !== undefined && s.deps.holds !== undefined && !s.deps.holds(sessionKey),
    /** True when `dedupeKey` is stored: pending, set aside, or handled within the retention. */
    knows: (dedupeKey: string): boolean => {
      const handledAt = s.done.get(dedupeKey);
      if (handledAt !== undefined && handledAt >= s.now() - s.retentionMs) return true;
      return s.pending.has(dedupeKey) || s.setAside.has(dedupeKey);
    },
    /** The pending entry that runs as `runId` (its own run, or the run it was tied to): its session and when it came. */
    pendingRun(runId: string): { sessionKey: string; queuedAt: number } | undefined {
      for (const entry of s.pending.values())
        if (entry.runId === runId || entry.turn === runId)
          return { sessionKey: entry.sessionKey ?? "", queuedAt: entry.receivedAt };
      return undefined;
    },
    /** Whether a handled row names `runId`: a stored turn that ended (kept as long as its dedupe key), whatever it answered. */
    handledRun(runId: string): boolean {
      for (const key of s.done.keys()) {
        const row = s.rows.get(key);
        if (row?.status === "done" && row.runId === runId) return true;
      }
      return false;
    },
    /** Messages stored but not yet handled, oldest first. */
    pending: (): PendingInbound[] => [...s.pending.values()].sort((a, b) => a.seq - b.seq),
    recordStart: (id: string) => recordStart(s, id),
    bind: (ids: string[], runId: string) => bind(s, ids, runId),
    forgiveInterruptedStarts: (only?: SessionFilter) => forgiveInterruptedStarts(s, only),
    setAside: (id: string, why: { reason: string; session?: string }): Promise<SetAsideInbound | undefined> =>
      setAside(s, id, why),
    /** Messages set aside, oldest first. */
    listSetAside: (): SetAsideInbound[] => [...s.setAside.values()].sort((a, b) => a.seq - b.seq),
    retry: (id: string) => retry(s, id),
    drop: (id: string) => drop(s, id),
    /** Settles when every change made so far is on disk. */
    flush: () => s.rows.flush(),
    /** Flushes and writes `inbox.json` in full. */
    close: () => s.rows.close(),
  };
}

/** The durable inbox. */
export type Inbox = Awaited<ReturnType<typeof createInbox>>;
