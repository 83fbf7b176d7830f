import { readFile, unlink } from "node:fs/promises";
import type { Logger } from "../logger.js";
import type { StatePort, StateTable } from "../state/state-port.js";
import {
  InboxRowSchema,
  type InboxRow,
  type PendingInbound,
  type PendingRow,
  type SetAsideInbound,
  entryOf,
  sessionOfRow,
  setAsideOf,
} from "./inbox-rows.js";
import { skippedByPrune } from "../state/global-only-write-error.js";
import { checkWith } from "../state/schema-check.js";
import type { InboxForwarding } from "./inbox-forward.js";

import { InboxWriteError } from "./inbox-write-error.js";

export { InboxWriteError };

/** How long the inbox remembers a handled key by default (7 days): a key handled before is new again. */
export const INBOX_RETENTION_MS = 7 * 24 * 3_600_000;

/** Dependencies of the inbox (`createInbox`); `holds`/`forward`: an entry of a session held elsewhere is forwarded (./inbox-forward.ts). */
export interface InboxDeps extends InboxForwarding {
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
  /** after each prune: what ended before `cutoffMs` (the oldest handled key kept) goes too (the durable run results) */
  onPrune?: (cutoffMs: number) => void;
}

/** The inbox's table and what it holds in memory: pending, set-aside and handled entries. */
export interface InboxState {
  deps: InboxDeps;
  rows: StateTable<InboxRow>;
  now: () => number;
  retentionMs: number;
  maxKeys: number;
  pending: Map<string, PendingInbound>;
  setAside: Map<string, SetAsideInbound>;
  /** handled keys in the order they were handled (oldest first), so pruning stops at the first young one */
  done: Map<string, number>;
  nextSeq: number;
  prunedAt: number;
}

/**
 * Opens the table and sorts its rows into pending, set-aside and handled (oldest first). A port
 * whose partitions change (`state.parted`) sorts the rows of an adopted partition in the same way
 * and takes those of an evicted one out (docs/scale-out.md "Partitions adopted and evicted one by one").
 */
export async function openInboxState(deps: InboxDeps): Promise<InboxState> {
  const rows = await deps.state.table<InboxRow>({
    name: "inbox",
    path: deps.path,
    what: "inbox",
    keyField: "id",
    invalidRows: "drop",
    sessionOf: (_id, row) => sessionOfRow(row),
    check: checkWith(InboxRowSchema),
    // Called only by an adopt or evict, after the open: `s` is set by then.
    onAdopt: (adopted) => indexRows(s, adopted),
    onEvict: (evicted) => forgetRows(s, evicted),
  });
  const now = deps.now ?? Date.now;
  const retention = { retentionMs: deps.retentionMs ?? INBOX_RETENTION_MS, maxKeys: deps.maxKeys ?? 50_000 };
  const s: InboxState = {
    deps,
    rows,
    now,
    ...retention,
    pending: new Map(),
    setAside: new Map(),
    done: new Map(),
    nextSeq: 0,
    prunedAt: now(),
  };
  indexRows(s, rows.entries());
  return s;
}

/**
 * Sorts rows into pending and set-aside (new entries get a later `seq`) and their handled keys into
 * `done`, merged in `at` order so a prune still stops at the first young key. A key already known
 * is sorted again. Adopted keys past `maxKeys` are pruned by the next handled message.
 */
function indexRows(s: InboxState, rows: Iterable<readonly [string, InboxRow]>): void {
  const handled: Array<[string, number]> = [];
  for (const [id, row] of rows) {
    forgetRow(s, id);
    if (row.status === "done") handled.push([id, row.at]);
    else {
      if (row.status === "pending") s.pending.set(id, entryOf(id, row));
      else s.setAside.set(id, setAsideOf(id, row));
      s.nextSeq = Math.max(s.nextSeq, row.seq + 1);
    }
  }
  if (handled.length > 0) s.done = mergedByAt(s.done, handled);
}

/**
 * `done` with `added` merged in, oldest first. A Map cannot insert in the middle, so this is
 * O(done + added): once per adopt, `done` bounded by `maxKeys`.
 */
function mergedByAt(done: Map<string, number>, added: Array<[string, number]>): Map<string, number> {
  added.sort((a, b) => a[1] - b[1]);
  const merged = new Map<string, number>();
  let next = 0;
  for (const [key, at] of done) {
    for (; next < added.length && added[next]![1] < at; next++) merged.set(...added[next]!);
    merged.set(key, at);
  }
  for (; next < added.length; next++) merged.set(...added[next]!);
  return merged;
}

/** The rows of evicted partitions left the table's image: their entries and handled keys are no longer this inbox's. */
function forgetRows(s: InboxState, rows: Iterable<readonly [string, InboxRow]>): void {
  for (const [id] of rows) forgetRow(s, id);
}

const forgetRow = (s: InboxState, id: string) => {
  s.pending.delete(id);
  s.setAside.delete(id);
  s.done.delete(id);
};

/** Imports the handled keys of an earlier version's dedupe file once, then removes the file. */
export async function importLegacy(s: InboxState, file: string): Promise<void> {
  let legacy: Record<string, unknown>;
  try {
    legacy = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    s.deps.logger.warn({ file, err }, "earlier dedupe file unreadable; not imported");
    return;
  }
  const writes: Promise<void>[] = [];
  for (const [key, at] of Object.entries(legacy).sort((a, b) => Number(a[1]) - Number(b[1]))) {
    if (typeof at === "number" && !s.rows.has(key)) {
      s.done.set(key, at);
      writes.push(s.rows.set(key, { status: "done", at }));
    }
  }
  await Promise.all(writes);
  await unlink(file);
  s.deps.logger.info({ file, into: s.deps.path }, "imported the earlier dedupe file into the inbox");
}

/**
 * Forgets handled keys past the retention window, then the oldest beyond `maxKeys`. A row the port
 * refuses to remove (a key of no session, stored by an earlier version, on a partition owner
 * without the global lease) is forgotten here and left to the global holder's prune.
 */
export function prune(s: InboxState): void {
  const cutoff = s.now() - s.retentionMs;
  let left = 0;
  for (const [key, at] of s.done) {
    if (at >= cutoff && s.done.size <= s.maxKeys) break;
    s.done.delete(key);
    try {
      void s.rows.delete(key); // a lost deletion only keeps a dedupe key longer
    } catch (err) {
      if (!skippedByPrune(err)) throw err;
      left++; // refused before it was queued (a row of no session, or of a partition being evicted): logged once below
    }
  }
  if (left > 0)
    s.deps.logger.debug({ left }, "handled keys left to the global holder's or the partition's next holder's prune");
  s.prunedAt = s.now();
  // The oldest key kept (or the age bound when none is): the turns' other records are kept as long.
  s.deps.onPrune?.(Math.max(cutoff, s.done.values().next().value ?? cutoff));
}

/** The stored fields of an entry (without its status). */
export function rowOf(entry: PendingInbound): Omit<PendingRow, "status"> {
  return {
    seq: entry.seq,
    runId: entry.runId,
    receivedAt: entry.receivedAt,
    ...(entry.startedTurn ? { startedTurn: entry.startedTurn } : { message: entry.message }),
    starts: entry.starts,
    ...(entry.sessionKey !== undefined && { sessionKey: entry.sessionKey }),
    ...(entry.session !== undefined && { session: entry.session }),
    ...(entry.turn !== undefined && { turn: entry.turn }),
    ...(entry.access && { access: entry.access }),
    ...(entry.outcome && { outcome: entry.outcome }),
    ...(entry.interactive && { interactive: entry.interactive }),
  };
}

/** Waits for a write; a failure becomes an {@link InboxWriteError}. */
export async function persist(write: Promise<void>): Promise<void> {
  try {
    await write;
  } catch (err) {
    throw new InboxWriteError(err);
  }
}
