import { ErrorCodes, SwitchboardError } from "../errors.js";
import type { StatePort } from "../state/state-port.js";
import { deliveryContextKey } from "../sessions/delivery-context.js";
import type { DeliveryContext } from "../sessions/session-entry.js";
import { type OutboundKind, type OutboxItem, OutboxItemSchema } from "./outbox-item.js";

/** Dependencies of {@link createOutbox}. */
export interface OutboxDeps {
  /** where the outbox's table is kept */
  state: StatePort;
  /** e.g. `$SWITCHBOARD_HOME/state/outbox.json` */
  path: string;
  now?: () => number;
  /** how long finished (delivered or failed) items are kept, to recognise duplicates and show failures */
  retention?: {
    /** default: 500 finished items */
    maxItems?: number;
    /** default: 7 days */
    maxAgeMs?: number;
  };
}

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

const DAY_MS = 24 * 60 * 60 * 1000;

/** The delivery lane of a target: messages to one lane leave one at a time, in order. */
export const laneOf = (target: DeliveryContext) => deliveryContextKey(target) ?? `${target.channel}|`;

/** Opens (or creates) the outbox file. A corrupt file is moved aside and reported, never overwritten. */
export async function createOutbox(deps: OutboxDeps) {
  const { path: file } = deps;
  const now = deps.now ?? Date.now;
  const maxItems = deps.retention?.maxItems ?? 500;
  const maxAgeMs = deps.retention?.maxAgeMs ?? 7 * DAY_MS;
  const items = await deps.state.table<OutboxItem>({
    name: "outbox",
    path: file,
    what: "outbox",
    keyField: "id",
    invalidRows: "keep",
    check(id, row) {
      const parsed = OutboxItemSchema.safeParse(row);
      if (!parsed.success) return { error: parsed.error.message };
      return parsed.data.id === id ? { value: parsed.data } : { error: "id does not match its key" };
    },
  });
  const report: { corruptMovedTo?: string } =
    items.report.corruptMovedTo === undefined ? {} : { corruptMovedTo: items.report.corruptMovedTo };
  let nextSeq = 0;
  // Finished items, oldest update first: kept in order as they finish, so pruning never sorts.
  const finished = new Map<string, number>();
  // Pending items by lane, each lane oldest first (by seq), so finding a lane's head never scans the outbox.
  const lanes = new Map<string, Map<string, OutboxItem>>();
  // Chunks this process has claimed and whose outcome is not recorded yet: item id -> chunk index.
  // A `sending` marker read from disk is not in here: it is a send a crash interrupted, claimable again.
  const claims = new Map<string, number>();
  for (const item of [...items.values()].sort((a, b) => a.seq - b.seq)) {
    nextSeq = Math.max(nextSeq, item.seq + 1);
    if (item.status !== "pending") finished.set(item.id, item.updatedAt);
    else indexPending(item);
  }

  function indexPending(item: OutboxItem): void {
    const lane = laneOf(item.target);
    let queue = lanes.get(lane);
    if (!queue) {
      queue = new Map();
      lanes.set(lane, queue);
    }
    queue.set(item.id, item); // an update keeps the item's place
  }

  function unindex(item: OutboxItem): void {
    const lane = laneOf(item.target);
    const queue = lanes.get(lane);
    if (queue?.delete(item.id) && queue.size === 0) lanes.delete(lane);
  }
  {
    const sorted = [...finished].sort((a, b) => a[1] - b[1]);
    finished.clear();
    for (const [id, at] of sorted) finished.set(id, at);
  }

  function put(item: OutboxItem): Promise<void> {
    finished.delete(item.id);
    if (item.status !== "pending") {
      finished.set(item.id, item.updatedAt);
      unindex(item);
    }
    const written = items.set(item.id, item);
    if (item.status === "pending") indexPending(items.get(item.id)!);
    return written;
  }

  /** Drops finished items older than the retention window or beyond the newest `maxItems` (oldest first). */
  function prune(): Promise<void>[] {
    const cutoff = now() - maxAgeMs;
    const drops: Promise<void>[] = [];
    for (const [id, at] of finished) {
      if (finished.size <= maxItems && at >= cutoff) break;
      finished.delete(id);
      drops.push(items.delete(id));
    }
    return drops;
  }

  // A read-only reader (the CLI's doctor) sees the table as the gateway left it.
  if (!deps.state.readOnly) await Promise.all(prune());

  /**
   * {@link enqueue} without waiting: the item is in the outbox at once and `written` settles when it
   * is durable. The delivery gate claims the item's first chunk right after; that claim's line
   * (the item's full after-image, later in the same journal) is synced together with it.
   */
  function enqueueNow(input: NewOutboxItem): { item: OutboxItem; created: boolean; written: Promise<void> } {
    const existing = items.get(input.id);
    if (existing) return { item: existing, created: false, written: Promise.resolve() };
    const at = now();
    const { replyToMessageId, ...fields } = input;
    const item: OutboxItem = {
      ...fields,
      ...(replyToMessageId !== undefined && { replyToMessageId }),
      seq: nextSeq++,
      sent: 0,
      messageIds: [],
      status: "pending",
      attempts: 0,
      nextAttemptAt: at,
      createdAt: at,
      updatedAt: at,
    };
    const written = put(item);
    return { item: items.get(item.id)!, created: true, written };
  }

  return {
    path: file,
    report,

    /** The item with this idempotency key, if it is still kept. */
    get(id: string): OutboxItem | undefined {
      return items.get(id);
    },

    /** Adds an item unless one with the same id exists; `created` says which. Settles once on disk. */
    async enqueue(input: NewOutboxItem): Promise<{ item: OutboxItem; created: boolean }> {
      const { written, ...result } = enqueueNow(input);
      await written;
      return result;
    },

    enqueueNow,

    /** Applies `change` to an item (throws for an unknown id). Settles once on disk. */
    async update(id: string, change: OutboxChange): Promise<OutboxItem> {
      const current = items.get(id);
      if (!current)
        throw new SwitchboardError(
          ErrorCodes.INVALID_ARGUMENT,
          `outbox item "${id}" does not exist (finished items are pruned)`,
        );
      const item: OutboxItem = { ...current, ...change, updatedAt: now() };
      // Recording a chunk's outcome (or finishing the item) ends this process's claim on it.
      if ("sending" in change || "sent" in change || item.status !== "pending") claims.delete(id);
      // An `undefined` in the change removes the field (e.g. `sending` once a send is recorded).
      for (const key of Object.keys(change) as Array<keyof OutboxChange>)
        if (change[key] === undefined) delete item[key];
      const written = put(item);
      if (item.status !== "pending") prune();
      await written;
      return item;
    },

    /**
     * Claims chunk `index` of a pending item for one sender: records `sending: { index, at }` and
     * settles with the item once that is on disk. Undefined when the item is not pending, that
     * chunk is already recorded as sent, or another sender of this process holds its claim, so
     * two senders never both send one chunk. A claim read from disk after a restart (the process
     * died during that send) can be claimed again: the chunk is resent.
     */
    async claim(id: string, index: number, at: number): Promise<OutboxItem | undefined> {
      const current = items.get(id);
      if (current?.status !== "pending" || current.sent !== index || claims.get(id) === index) return undefined;
      claims.set(id, index);
      const item: OutboxItem = { ...current, sending: { index, at }, updatedAt: now() };
      try {
        await put(item);
      } catch (err) {
        // Not on disk, so not claimed: the next attempt may claim it again.
        if (claims.get(id) === index) claims.delete(id);
        throw err;
      }
      return item;
    },

    /** Pending items, oldest first. */
    pending(): OutboxItem[] {
      return [...lanes.values()].flatMap((queue) => [...queue.values()]).sort((a, b) => a.seq - b.seq);
    },

    /** The oldest pending item of a lane (see {@link laneOf}). */
    laneHead(lane: string): OutboxItem | undefined {
      return lanes.get(lane)?.values().next().value;
    },

    /** The lanes that have pending items. */
    pendingLanes(): string[] {
      return [...lanes.keys()];
    },

    /** Failed items kept for `/status`, newest first, optionally of one session. */
    failures(sessionKey?: string): OutboxItem[] {
      return [...items.values()]
        .filter((item) => item.status === "failed" && (sessionKey === undefined || item.sessionKey === sessionKey))
        .sort((a, b) => b.updatedAt - a.updatedAt);
    },

    /** Settles when every change made so far is on disk. */
    flush(): Promise<void> {
      return items.flush();
    },

    /** Flushes and writes `outbox.json` in full. */
    close(): Promise<void> {
      return items.close();
    },
  };
}
