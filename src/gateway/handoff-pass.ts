// One pass of the owner's drain over the hand-off inbox (./handoff-drain.ts schedules them): the
// due rows, oldest first, each through its kind's intake. Rows whose intake stores at once (hooks,
// `chat.send`, platform updates) are taken in together, in row order, each row deleted in the very commit that stores its intake (the row writer's batch); a
// failed row is counted, put off and passed over; a storage failure ends the pass and pauses the drain.
import {
  type HandoffRow,
  PoisonHandoffError,
  HANDOFF_BACKOFF,
  HANDOFF_SET_ASIDE,
  recordHandoffFailure,
  waitingHandoffs,
} from "../cluster/handoff-sql.js";
import { FencedOutError } from "../cluster/lease-sql.js";
import { InboxWriteError } from "../inbound/inbox.js";
import type { Logger } from "../logger.js";
import { isConnectionError } from "../state/postgres/database-errors.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import type { RowWriter } from "../state/postgres/row-writer.js";

/**
 * Takes one row in; settles once it is durable in the owner's own store (its dedupe key with it).
 * `storesAtOnce`: when it stores the row, it queues that write in the owner's row writer before its
 * first await (so the row's delete can join that batch, and rows of its kind are taken in together).
 */
export type HandoffIntake = ((row: HandoffRow) => Promise<void>) & {
  storesAtOnce?: boolean;
  /** settles once the rows taken in so far were handled up to their session's queue (a chat.abort waits for it) */
  handled?: () => Promise<void>;
};

/**
 * Whether a failed intake failed for want of storage (the database away, this owner fenced out):
 * then every row behind it would fail too, so the pass ends. An adapter wraps the store's failure
 * (grammy: BotError.error, then the adapter's error's cause).
 */
function isStorageFailure(err: unknown): boolean {
  for (let at = err, depth = 0; at && depth < 5; depth++) {
    if (at instanceof InboxWriteError || at instanceof FencedOutError || isConnectionError(at)) return true;
    const next = at as { cause?: unknown; error?: unknown };
    at = next.error ?? next.cause;
  }
  return false;
}

/** What a pass needs: the drain's database, intakes, logger and limits, the database's row writer and the storage pause. */
export interface PassDeps {
  database: PostgresDatabase;
  intake: Record<string, HandoffIntake>;
  logger: Logger;
  setAside?: typeof HANDOFF_SET_ASIDE | undefined;
  backoff?: typeof HANDOFF_BACKOFF | undefined;
  writer: RowWriter;
  pause: (ms: number) => void;
  /** the partitions held (none: every row is this drain's) and whether rows of no part are (the global holder) */
  held?: (() => ReadonlySet<number>) | undefined;
  global?: (() => boolean) | undefined;
}

/** Whether a row read is still this gateway's: a partition let go since (a rebalance) leaves it for its new holder. */
const stillHeld = (deps: PassDeps, row: HandoffRow) =>
  row.part === null || row.part === undefined || !deps.held || deps.held().has(row.part);

/** After `attempts` failures: `firstMs`, doubling, at most `maxMs`. */
const backoffMs = ({ firstMs, maxMs }: typeof HANDOFF_BACKOFF, attempts: number) =>
  Math.min(firstMs * 2 ** Math.min(attempts - 1, 30), maxMs);

/**
 * Counts a failed intake on its row (set aside only after {@link HANDOFF_SET_ASIDE}, whatever the
 * error: a bot not initialized yet, an account not running here yet) and puts the row off. A
 * storage failure puts off the whole drain instead (`pause`), so the row stays first. False: end this pass.
 */
async function failed(deps: PassDeps, row: HandoffRow, err: unknown): Promise<boolean> {
  const reason = (err as Error)?.message ?? String(err);
  const limit = deps.setAside ?? HANDOFF_SET_ASIDE;
  const backoff = deps.backoff ?? HANDOFF_BACKOFF;
  const storage = isStorageFailure(err);
  const { attempts, setAside } = await deps.database.transaction(
    (c) => recordHandoffFailure(c, row.id, reason, limit, storage ? undefined : backoff),
    { parts: [row.part ?? null] },
  );
  if (storage) deps.pause(backoffMs(backoff, attempts));
  const fields = { id: row.id, kind: row.kind, dedupeKey: row.dedupeKey, attempts, ageMs: Math.round(row.ageMs) };
  if (setAside)
    deps.logger.warn({ ...fields, reason }, "handed-off inbound cannot be taken in; set aside in inbound_handoff");
  else if (storage)
    deps.logger.warn({ ...fields, err }, "handed-off inbound not stored by the owner; the rows behind it wait");
  else deps.logger.warn({ ...fields, err }, "handed-off inbound not taken in yet; tried again at the next pass");
  return !storage;
}

/** A row whose intake was started: its intake, and its delete when it joined the intake's own batch. */
interface Taking {
  row: HandoffRow;
  taken: Promise<void>;
  dropped?: Promise<void>;
}

/**
 * Starts a row's intake. An intake that stores the row in its synchronous step (`storesAtOnce`: a
 * hook's `startTurn` queues its inbox entry before its first await) has the row's delete queued in
 * that same step when the writer saw it write, so the one commit that makes the intake durable
 * deletes the row: no crash falls between them. Otherwise (a key the inbox knew already, a memory
 * inbox, a platform update whose bot awaits first) the row is deleted once its intake settled.
 */
function startIntake(deps: PassDeps, row: HandoffRow): Taking {
  const intake = deps.intake[row.kind];
  if (!intake)
    return { row, taken: Promise.reject(new PoisonHandoffError(`no intake for inbound of kind "${row.kind}"`)) };
  const before = deps.writer.queuedWrites();
  let taken: Promise<void>;
  try {
    taken = intake(row);
  } catch (err) {
    taken = Promise.reject(err);
  }
  if (!intake.storesAtOnce || deps.writer.queuedWrites() === before) return { row, taken };
  return { row, taken, dropped: deps.writer.dropHandoff(row.id, row.part ?? null) };
}

/**
 * Settles the intakes started, in row order: a failed one is counted on its row (a storage failure
 * ends the pass: false); the others' deletes are awaited together (queued after their intake for
 * the rows whose delete did not join it: a crash before drains them again, and the intake's dedupe drops them).
 */
async function settle(deps: PassDeps, takings: Taking[]): Promise<boolean> {
  const drops: Promise<void>[] = [];
  let going = true;
  for (const { row, taken, dropped } of takings) {
    const error = await taken.then(
      () => undefined,
      (err: unknown) => ({ err }),
    );
    if (error) {
      dropped?.catch(() => {});
      // Past a storage failure the rows behind wait uncounted (they failed the same way).
      if (going) going = await failed(deps, row, error.err);
      continue;
    }
    drops.push(dropped ?? deps.writer.dropHandoff(row.id, row.part ?? null));
    const fields = { id: row.id, kind: row.kind, receivedBy: row.receivedBy, ageMs: Math.round(row.ageMs) };
    deps.logger.info(fields, "took in inbound another gateway stored");
  }
  await Promise.all(drops);
  return going;
}

/**
 * Takes in a page of rows, in order: the rows whose intake stores at once are started together (one
 * batch of the writer: one commit for all of them and their deletes); a row of another kind waits
 * for those before it and is taken in alone. False: stop this pass (storage failed).
 */
async function takeIn(
  deps: PassDeps,
  rows: HandoffRow[],
  stopped: () => boolean,
  queuedAll?: () => void,
): Promise<boolean> {
  let started: Taking[] = [];
  for (const row of rows) {
    if (stopped()) break;
    // Checked in the same synchronous step as its intake's store: held there too, never forwarded back.
    if (!stillHeld(deps, row)) continue;
    if (deps.intake[row.kind]?.storesAtOnce) {
      started.push(startIntake(deps, row));
      continue;
    }
    if (!(await settle(deps, started))) return false;
    started = [];
    if (!(await settle(deps, [startIntake(deps, row)]))) return false;
  }
  queuedAll?.();
  return (await settle(deps, started)) && !stopped();
}

/**
 * One pass: the waiting rows that are due (`fresh`: only those never tried), oldest first, in
 * pages, until none is left. A row that fails is passed over (the rows behind it are not held
 * up); a storage failure ends the pass. `queuedAll` once the last page's intakes are queued.
 */
export async function pass(
  deps: PassDeps,
  fresh: boolean,
  stopped: () => boolean,
  queuedAll: () => void,
): Promise<void> {
  const page = 100;
  let after = "0";
  for (;;) {
    const scope = deps.held && { parts: [...deps.held()], global: deps.global?.() ?? true };
    const rows = await waitingHandoffs(deps.database.pool, page, after, fresh, scope || undefined);
    const last = rows.length < page;
    if (!(await takeIn(deps, rows, stopped, last ? queuedAll : undefined)) || last) return;
    after = rows[rows.length - 1]!.id;
  }
}
