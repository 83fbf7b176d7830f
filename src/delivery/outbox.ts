import { ErrorCodes, SwitchboardError } from "../errors.js";
import type { DeliveryContext } from "../sessions/session-entry.js";
import type { OutboundKind, OutboxItem } from "./outbox-item.js";
import { type OutboxDeps, type OutboxState, openOutboxState, prune, put } from "./outbox-state.js";

export { type OutboxDeps, laneOf } from "./outbox-state.js";

/** What a new outbox item needs; the rest starts fresh (pending, nothing sent, due now). */
export interface NewOutboxItem {
  id: string;
  sessionKey: string;
  target: DeliveryContext;
  kind: OutboundKind;
  chunks: string[];
  replyToMessageId?: string | undefined;
}

/** The fields of an item a delivery attempt changes. */
export type OutboxChange = Partial<
  Pick<
    OutboxItem,
    "sent" | "sending" | "messageIds" | "status" | "attempts" | "nextAttemptAt" | "lastError" | "deliveredAt"
  >
>;

/** The durable outbox: outbound messages keyed by idempotency key, persisted through lowdb. */
export type Outbox = Awaited<ReturnType<typeof createOutbox>>;

/**
 * {@link Outbox.enqueue} without waiting: the item is in the outbox at once and `written` settles when
 * it is durable. The delivery gate claims the item's first chunk right after; that claim's line
 * (the item's full after-image, later in the same journal) is synced together with it.
 */
function enqueueNow(s: OutboxState, input: NewOutboxItem) {
  const existing = s.items.get(input.id);
  if (existing) return { item: existing, created: false, written: Promise.resolve() };
  const at = s.now();
  const { replyToMessageId, ...fields } = input;
  const item: OutboxItem = {
    ...fields,
    ...(replyToMessageId !== undefined && { replyToMessageId }),
    seq: s.nextSeq++,
    sent: 0,
    messageIds: [],
    status: "pending",
    attempts: 0,
    nextAttemptAt: at,
    createdAt: at,
    updatedAt: at,
  };
  const written = put(s, item);
  return { item: s.items.get(item.id)!, created: true, written };
}

/** Adds an item unless one with the same id exists; `created` says which. Settles once on disk. */
async function enqueue(s: OutboxState, input: NewOutboxItem): Promise<{ item: OutboxItem; created: boolean }> {
  const { written, ...result } = enqueueNow(s, input);
  await written;
  return result;
}

/** Applies `change` to an item (throws for an unknown id). Settles once on disk. */
async function update(s: OutboxState, id: string, change: OutboxChange): Promise<OutboxItem> {
  const current = s.items.get(id);
  if (!current)
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `outbox item "${id}" does not exist (finished items are pruned)`,
    );
  const item: OutboxItem = { ...current, ...change, updatedAt: s.now() };
  // Recording a chunk's outcome (or finishing the item) ends this process's claim on it.
  if ("sending" in change || "sent" in change || item.status !== "pending") s.claims.delete(id);
  // An `undefined` in the change removes the field (e.g. `sending` once a send is recorded).
  for (const key of Object.keys(change) as Array<keyof OutboxChange>) if (change[key] === undefined) delete item[key];
  const written = put(s, item);
  if (item.status !== "pending") prune(s);
  await written;
  return item;
}

/**
 * Claims chunk `index` of a pending item for one sender: records `sending: { index, at }` and
 * settles with the item once that is on disk. Undefined when the item is not pending, that
 * chunk is already recorded as sent, or another sender of this process holds its claim, so
 * two senders never both send one chunk. A claim read from disk after a restart (the process
 * died during that send) can be claimed again: the chunk is resent.
 */
async function claim(s: OutboxState, id: string, index: number, at: number): Promise<OutboxItem | undefined> {
  const current = s.items.get(id);
  if (current?.status !== "pending" || current.sent !== index || s.claims.get(id) === index) return undefined;
  s.claims.set(id, index);
  const item: OutboxItem = { ...current, sending: { index, at }, updatedAt: s.now() };
  try {
    await put(s, item);
  } catch (err) {
    // Not on disk, so not claimed: the next attempt may claim it again.
    if (s.claims.get(id) === index) s.claims.delete(id);
    throw err;
  }
  return item;
}

/** Failed items kept for `/status`, newest first, optionally of one session. */
function failures(s: OutboxState, sessionKey?: string): OutboxItem[] {
  return [...s.items.values()]
    .filter((item) => item.status === "failed" && (sessionKey === undefined || item.sessionKey === sessionKey))
    .sort((a, b) => b.updatedAt - a.updatedAt);
}

/** Opens (or creates) the outbox file. A corrupt file is moved aside and reported, never overwritten. */
export async function createOutbox(deps: OutboxDeps) {
  const s = await openOutboxState(deps);
  const moved = s.items.report.corruptMovedTo;
  const report: { corruptMovedTo?: string } = moved === undefined ? {} : { corruptMovedTo: moved };
  // A read-only reader (the CLI's doctor) sees the table as the gateway left it.
  if (!deps.state.readOnly) await Promise.all(prune(s));
  return {
    path: deps.path,
    report,
    /** The item with this idempotency key, if it is still kept. */
    get: (id: string): OutboxItem | undefined => s.items.get(id),
    /** Adds an item unless one with the same id exists; `created` says which. Settles once on disk. */
    enqueue: (input: NewOutboxItem) => enqueue(s, input),
    enqueueNow: (input: NewOutboxItem): { item: OutboxItem; created: boolean; written: Promise<void> } =>
      enqueueNow(s, input),
    update: (id: string, change: OutboxChange) => update(s, id, change),
    /** Claims one chunk of a pending item for one sender, once on disk (see `claim` above). */
    claim: (id: string, index: number, at: number) => claim(s, id, index, at),
    /** Pending items, oldest first. */
    pending: (): OutboxItem[] =>
      [...s.lanes.values()].flatMap((queue) => [...queue.values()]).sort((a, b) => a.seq - b.seq),
    /** The oldest pending item of a lane (see {@link laneOf}). */
    laneHead: (lane: string): OutboxItem | undefined => s.lanes.get(lane)?.values().next().value,
    /** The lanes that have pending items. */
    pendingLanes: (): string[] => [...s.lanes.keys()],
    failures: (sessionKey?: string) => failures(s, sessionKey),
    /**
     * Sets who is told when a parted state port evicts partitions: the lanes that lost pending items
     * (nothing of theirs is left here, or a later item is now their head) and the sessions whose
     * items left. One listener: the delivery gate's.
     */
    onEvicted(listener: NonNullable<OutboxState["evicted"]>): void {
      s.evicted = listener;
    },
    /** Settles when every change made so far is on disk. */
    flush: (): Promise<void> => s.items.flush(),
    /** Flushes and writes `outbox.json` in full. */
    close: (): Promise<void> => s.items.close(),
  };
}
