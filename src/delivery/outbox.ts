import { ErrorCodes, SwitchboardError } from "../errors.js";
import type { Logger } from "../logger.js";
import { openJsonRecord } from "../sessions/atomic-json-file.js";
import type { DeliveryContext } from "../sessions/session-entry.js";
import { WriteCoalescer } from "../sessions/write-coalescer.js";
import { type OutboundKind, type OutboxItem, OutboxItemSchema } from "./outbox-item.js";

/** Dependencies of {@link createOutbox}. */
export interface OutboxDeps {
  /** e.g. `$SWITCHBOARD_HOME/state/outbox.json` */
  path: string;
  logger: Logger;
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

/** Opens (or creates) the outbox file. A corrupt file is moved aside and reported, never overwritten. */
export async function createOutbox(deps: OutboxDeps) {
  const { path: file, logger } = deps;
  const now = deps.now ?? Date.now;
  const maxItems = deps.retention?.maxItems ?? 500;
  const maxAgeMs = deps.retention?.maxAgeMs ?? 7 * DAY_MS;
  const { db, corruptMovedTo } = await openJsonRecord(file, { logger, now, what: "outbox" });
  const report: { corruptMovedTo?: string } = corruptMovedTo === undefined ? {} : { corruptMovedTo };
  const items = new Map<string, OutboxItem>();
  for (const [id, row] of Object.entries(db.data)) {
    const parsed = OutboxItemSchema.safeParse(row);
    // Invalid rows stay in the file untouched; they are only skipped.
    if (parsed.success && parsed.data.id === id) items.set(id, Object.freeze(parsed.data));
    else
      logger.warn(
        { file, id, err: parsed.error ?? "id does not match its key" },
        "skipping an invalid outbox row (kept in the file)",
      );
  }
  let nextSeq = Math.max(-1, ...[...items.values()].map((item) => item.seq)) + 1;
  const writes = new WriteCoalescer(() => db.write());

  function put(item: OutboxItem): void {
    const frozen = Object.freeze(item);
    items.set(item.id, frozen);
    db.data[item.id] = frozen;
  }

  /** Drops finished items older than the retention window or beyond the newest `maxItems`. */
  function prune(): boolean {
    const finished = [...items.values()]
      .filter((item) => item.status !== "pending")
      .sort((a, b) => b.updatedAt - a.updatedAt);
    const cutoff = now() - maxAgeMs;
    const drop = finished.filter((item, index) => index >= maxItems || item.updatedAt < cutoff);
    for (const item of drop) {
      items.delete(item.id);
      delete db.data[item.id];
    }
    return drop.length > 0;
  }

  if (prune()) await writes.request();

  return {
    path: file,
    report,

    /** The item with this idempotency key, if it is still kept. */
    get(id: string): OutboxItem | undefined {
      return items.get(id);
    },

    /** Adds an item unless one with the same id exists; `created` says which. Settles once on disk. */
    async enqueue(input: NewOutboxItem): Promise<{ item: OutboxItem; created: boolean }> {
      const existing = items.get(input.id);
      if (existing) return { item: existing, created: false };
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
      put(item);
      await writes.request();
      return { item: items.get(item.id)!, created: true };
    },

    /** Applies `change` to an item (throws for an unknown id). Settles once on disk. */
    async update(id: string, change: OutboxChange): Promise<OutboxItem> {
      const current = items.get(id);
      if (!current)
        throw new SwitchboardError(
          ErrorCodes.INVALID_ARGUMENT,
          `outbox item "${id}" does not exist (finished items are pruned)`,
        );
      const item: OutboxItem = { ...current, ...change, updatedAt: now() };
      // An `undefined` in the change removes the field (e.g. `sending` once a send is recorded).
      for (const key of Object.keys(change) as Array<keyof OutboxChange>)
        if (change[key] === undefined) delete item[key];
      put(item);
      if (item.status !== "pending") prune();
      await writes.request();
      return item;
    },

    /** Pending items, oldest first. */
    pending(): OutboxItem[] {
      return [...items.values()].filter((item) => item.status === "pending").sort((a, b) => a.seq - b.seq);
    },

    /** Failed items kept for `/status`, newest first, optionally of one session. */
    failures(sessionKey?: string): OutboxItem[] {
      return [...items.values()]
        .filter((item) => item.status === "failed" && (sessionKey === undefined || item.sessionKey === sessionKey))
        .sort((a, b) => b.updatedAt - a.updatedAt);
    },

    /** Settles when every change made so far is on disk. */
    flush(): Promise<void> {
      return writes.idle();
    },
  };
}
