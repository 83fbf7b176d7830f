import { deliveryContextKey } from "../sessions/delivery-context.js";
import type { DeliveryContext } from "../sessions/session-entry.js";
import type { StatePort, StateTable, TableSpec } from "../state/state-port.js";
import { skippedByPrune } from "../state/global-only-write-error.js";
import { type OutboxItem, OutboxItemSchema } from "./outbox-item.js";

/** Dependencies of the outbox (`createOutbox`). */
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

/** The outbox's table and its in-memory indexes: finished items by age, pending items by lane, claims. */
export interface OutboxState {
  items: StateTable<OutboxItem>;
  now: () => number;
  maxItems: number;
  maxAgeMs: number;
  nextSeq: number;
  /** finished items, oldest update first: kept in order as they finish, so pruning never sorts */
  finished: Map<string, number>;
  /** pending items by lane, each lane oldest first (by seq), so finding a lane's head never scans the outbox */
  lanes: Map<string, Map<string, OutboxItem>>;
  /**
   * Chunks this process has claimed and whose outcome is not recorded yet: item id -> chunk index.
   * A `sending` marker read from disk is not in here: it is a send a crash interrupted, claimable again.
   */
  claims: Map<string, number>;
  /**
   * Told after the state port evicted partitions (`PartedState.evict`): the lanes that lost pending
   * items and the sessions whose items left (the delivery gate pumps those lanes and ends the
   * leaves of those sessions); set by `Outbox.onEvicted`.
   */
  evicted?: (lanes: string[], sessions: ReadonlySet<string>) => void;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The delivery lane of a target: messages to one lane leave one at a time, in order. */
export const laneOf = (target: DeliveryContext) => deliveryContextKey(target) ?? `${target.channel}|`;

/** What a parted port tells the table: rows of adopted partitions joined its image, rows of evicted ones left it. */
type ImageHooks = Required<Pick<TableSpec<OutboxItem>, "onAdopt" | "onEvict">>;

/** Opens the outbox's table; rows that fail the schema are kept as they are, not dropped. */
function openTable(deps: OutboxDeps, hooks: ImageHooks): Promise<StateTable<OutboxItem>> {
  return deps.state.table<OutboxItem>({
    ...hooks,
    name: "outbox",
    path: deps.path,
    what: "outbox",
    keyField: "id",
    invalidRows: "keep",
    sessionOf: (_id, item) => item.sessionKey,
    check(id, row) {
      const parsed = OutboxItemSchema.safeParse(row);
      if (!parsed.success) return { error: parsed.error.message };
      return parsed.data.id === id ? { value: parsed.data } : { error: "id does not match its key" };
    },
  });
}

/** Opens the table and indexes its items: pending ones by lane, finished ones oldest update first. */
export async function openOutboxState(deps: OutboxDeps): Promise<OutboxState> {
  // Called by a parted port only, after the open below: `s` is set by then.
  const itemsOf = (rows: ReadonlyArray<readonly [string, OutboxItem]>) => rows.map(([, item]) => item);
  const hooks: ImageHooks = {
    onAdopt: (rows) => fileItems(s, itemsOf(rows)),
    onEvict: (rows) => forgetItems(s, itemsOf(rows)),
  };
  const s: OutboxState = {
    items: await openTable(deps, hooks),
    now: deps.now ?? Date.now,
    maxItems: deps.retention?.maxItems ?? 500,
    maxAgeMs: deps.retention?.maxAgeMs ?? 7 * DAY_MS,
    nextSeq: 0,
    finished: new Map(),
    lanes: new Map(),
    claims: new Map(),
  };
  fileItems(s, [...s.items.values()]);
  return s;
}

/**
 * Indexes items that joined the image (all of them at open; an adopted partition's later): pending
 * ones behind their lane's queue, oldest first, and finished ones after those kept, oldest update
 * first. O(items). Adopted items queue behind the lane's items of this process: their `seq` came
 * from another gateway's counter, and a message of this process may be half sent. Adopted finished
 * items count as the newest kept, so pruning reaches them after the ones kept before.
 */
function fileItems(s: OutboxState, items: readonly OutboxItem[]): void {
  const bySeq = [...items].sort((a, b) => a.seq - b.seq);
  for (const item of bySeq) {
    s.nextSeq = Math.max(s.nextSeq, item.seq + 1);
    if (item.status === "pending") indexPending(s, item);
  }
  const finished = bySeq.filter((item) => item.status !== "pending").sort((a, b) => a.updatedAt - b.updatedAt);
  for (const item of finished) s.finished.set(item.id, item.updatedAt);
}

/** Unindexes items an evicted partition took out of the image, then tells `s.evicted`. O(items). */
function forgetItems(s: OutboxState, items: readonly OutboxItem[]): void {
  const lanes = new Set<string>();
  for (const item of items) {
    s.finished.delete(item.id);
    s.claims.delete(item.id);
    const lane = laneOf(item.target);
    if (s.lanes.get(lane)?.has(item.id)) lanes.add(lane);
    unindex(s, item);
  }
  s.evicted?.([...lanes], new Set(items.map((item) => item.sessionKey)));
}

/** Files a pending item under its lane; an update keeps the item's place. */
function indexPending(s: OutboxState, item: OutboxItem): void {
  const lane = laneOf(item.target);
  let queue = s.lanes.get(lane);
  if (!queue) {
    queue = new Map();
    s.lanes.set(lane, queue);
  }
  queue.set(item.id, item);
}

/** Takes an item out of its lane (it finished); an emptied lane is forgotten. */
function unindex(s: OutboxState, item: OutboxItem): void {
  const lane = laneOf(item.target);
  const queue = s.lanes.get(lane);
  if (queue?.delete(item.id) && queue.size === 0) s.lanes.delete(lane);
}

/** Stores an item and keeps the indexes in step; settles once on disk. */
export function put(s: OutboxState, item: OutboxItem): Promise<void> {
  s.finished.delete(item.id);
  if (item.status !== "pending") {
    s.finished.set(item.id, item.updatedAt);
    unindex(s, item);
  }
  const written = s.items.set(item.id, item);
  if (item.status === "pending") indexPending(s, s.items.get(item.id)!);
  return written;
}

/** Drops finished items older than the retention window or beyond the newest `maxItems` (oldest first). */
export function prune(s: OutboxState): Promise<void>[] {
  const cutoff = s.now() - s.maxAgeMs;
  const drops: Promise<void>[] = [];
  for (const [id, at] of s.finished) {
    if (s.finished.size <= s.maxItems && at >= cutoff) break;
    s.finished.delete(id);
    try {
      drops.push(s.items.delete(id));
    } catch (err) {
      // A finished item of a partition being evicted: its next holder prunes it.
      if (!skippedByPrune(err)) throw err;
    }
  }
  return drops;
}
