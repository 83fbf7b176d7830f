// The owner's side of the hand-off inbox (src/cluster/handoff-sql.ts, docs/scale-out.md "Inbound
// anywhere"): it LISTENs on a connection of its own and drains the rows other gateways stored,
// at start (a takeover), on each NOTIFY, before it stores a hook of its own (arrival order is
// kept across gateways) and every heartbeatMs as a safety net. Each row goes through the owner's
// own intake, which dedupes by the row's key, and is deleted only once that intake is durable.
import pg from "pg";
import type { StartTurn } from "../agents/stored-turn.js";
import type { ChannelAdapter } from "../delivery/channel-adapter.js";
import {
  type HandoffKind,
  type HandoffRow,
  PoisonHandoffError,
  deleteHandoff,
  handoffChannel,
  HANDOFF_SET_ASIDE,
  recordHandoffFailure,
  waitingHandoffs,
} from "../cluster/handoff-sql.js";
import { FencedOutError } from "../cluster/lease-sql.js";
import { hookHandoffIntake } from "../hooks/hook-handoff.js";
import { InboxWriteError } from "../inbound/inbox.js";
import type { Logger } from "../logger.js";
import { isConnectionError } from "../state/postgres/database-errors.js";
import type { PostgresDatabase } from "../state/postgres/database.js";

/** Takes one row in; settles once it is durable in the owner's own store (its dedupe key with it). */
type HandoffIntake = (row: HandoffRow) => Promise<void>;

/** What {@link createHandoffDrain} needs. */
export interface HandoffDrainDeps {
  /** the owner's database (fenced: a fenced-out owner deletes nothing) */
  database: Pick<PostgresDatabase, "pool" | "schema" | "transaction">;
  /** each kind's intake; a row of a kind not listed fails (set aside in time) */
  intake: Record<string, HandoffIntake>;
  logger: Logger;
  /** the safety net's period (`cluster.heartbeatMs`) */
  heartbeatMs: number;
  /** the LISTEN connection's reconnect pause; default 500 ms */
  retryMs?: number;
  /** when a failing row is set aside; default {@link HANDOFF_SET_ASIDE} */
  setAside?: { attempts: number; minAgeMs: number };
}

/** The owner's drain of the hand-off inbox. */
export interface HandoffDrain {
  /** LISTENs, drains once and drains every heartbeatMs from now on */
  start(): Promise<void>;
  /** a pass that begins after this call (rows committed before it are taken in when it settles); never rejects */
  drain(): Promise<void>;
  /** stops listening and draining; waits for the pass in flight */
  stop(): Promise<void>;
}

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

/**
 * Counts a failed intake on its row (set aside only after {@link HANDOFF_SET_ASIDE}, whatever the
 * error: a bot not initialized yet, an account not running here yet). False: end this pass.
 */
async function failed(deps: HandoffDrainDeps, row: HandoffRow, err: unknown): Promise<boolean> {
  const reason = (err as Error)?.message ?? String(err);
  const limit = deps.setAside ?? HANDOFF_SET_ASIDE;
  const { attempts, setAside } = await deps.database.transaction((c) => recordHandoffFailure(c, row.id, reason, limit));
  const storage = isStorageFailure(err);
  const fields = { id: row.id, kind: row.kind, dedupeKey: row.dedupeKey, attempts, ageMs: Math.round(row.ageMs) };
  if (setAside)
    deps.logger.warn({ ...fields, reason }, "handed-off inbound cannot be taken in; set aside in inbound_handoff");
  else if (storage)
    deps.logger.warn({ ...fields, err }, "handed-off inbound not stored by the owner; the rows behind it wait");
  else deps.logger.warn({ ...fields, err }, "handed-off inbound not taken in yet; tried again at the next pass");
  return !storage;
}

/** Takes one row in and deletes it. False: stop this pass (storage failed). */
async function takeIn(deps: HandoffDrainDeps, row: HandoffRow): Promise<boolean> {
  const intake = deps.intake[row.kind];
  try {
    if (!intake) throw new PoisonHandoffError(`no intake for inbound of kind "${row.kind}"`);
    await intake(row);
  } catch (err) {
    return failed(deps, row, err);
  }
  // Durable in the owner's intake: a crash before this delete drains it again, and the intake's dedupe drops it.
  await deps.database.transaction((client) => deleteHandoff(client, row.id));
  const fields = { id: row.id, kind: row.kind, receivedBy: row.receivedBy, ageMs: Math.round(row.ageMs) };
  deps.logger.info(fields, "took in inbound another gateway stored");
  return true;
}

/**
 * One pass: the waiting rows, oldest first, in batches, until none is left. A row that fails is
 * passed over (the rows behind it are not held up); a storage failure ends the pass.
 */
async function pass(deps: HandoffDrainDeps, stopped: () => boolean): Promise<void> {
  const batch = 100;
  let after = "0";
  for (;;) {
    const rows = await waitingHandoffs(deps.database.pool, batch, after);
    for (const row of rows) {
      if (stopped() || !(await takeIn(deps, row))) return;
      after = row.id;
    }
    if (rows.length < batch) return;
  }
}

/** The LISTEN connection: wakes `onNotify`; reconnects when it breaks, until closed. */
function listener(deps: HandoffDrainDeps, onNotify: () => void) {
  let closed = false;
  let current: pg.Client | undefined;
  const open = async () => {
    if (closed) return;
    const client = new pg.Client(deps.database.pool.options);
    client.on("error", () => {}); // a broken connection also ends
    client.on("notification", onNotify);
    client.once("end", () => {
      if (closed || current !== client) return;
      current = undefined;
      setTimeout(() => void open(), deps.retryMs ?? 500).unref();
    });
    current = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${handoffChannel(deps.database.schema)}`);
      // Rows stored while it was not listening are found by this pass.
      onNotify();
    } catch (err) {
      // Closed while connecting (the drain stopping): nothing to warn of.
      if (!closed) deps.logger.warn({ err }, "hand-off inbox not listened to; drained every heartbeat meanwhile");
      await client.end().catch(() => {});
    }
  };
  return {
    open,
    async close() {
      closed = true;
      await current?.end().catch(() => {});
    },
  };
}

/** The owner's drain: one pass at a time, and a pass asked for during one runs right after it. */
export function createHandoffDrain(deps: HandoffDrainDeps): HandoffDrain {
  let stopped = false;
  let running: Promise<void> | undefined;
  let again: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const run = () =>
    pass(deps, () => stopped).catch((err: unknown) =>
      deps.logger.warn({ err }, "hand-off inbox not drained; tried again at the next heartbeat"),
    );
  const drain = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    if (!running) {
      running = run().finally(() => {
        running = undefined;
      });
      return running;
    }
    again ??= running.then(() => {
      again = undefined;
      return drain();
    });
    return again;
  };
  const listening = listener(deps, () => void drain());
  return {
    async start() {
      timer = setInterval(() => void drain(), deps.heartbeatMs);
      timer.unref();
      await listening.open();
      await drain();
    },
    drain,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await listening.close();
      await running;
    },
  };
}

/**
 * The owner's drain on PostgreSQL with a cluster (undefined otherwise: on local files no other
 * gateway exists): hook turns go through `start` (the stored turns' `startTurn`), as the owner's own
 * hooks do; a platform event through its adapter's `takeHandedOff`, as its own webhook does.
 */
export function ownerHandoffDrain(
  database: HandoffDrainDeps["database"] | undefined,
  deps: { start: StartTurn; adapters: Map<string, ChannelAdapter>; logger: Logger; heartbeatMs: number },
): HandoffDrain | undefined {
  if (!database) return undefined;
  const intake: Record<HandoffKind, HandoffIntake> = { hook: hookHandoffIntake(deps.start) };
  for (const adapter of deps.adapters.values())
    if (adapter.takeHandedOff)
      intake[`${adapter.id}-update`] = (row) => adapter.takeHandedOff!(row.account, row.payload);
  return createHandoffDrain({
    database,
    intake,
    logger: deps.logger,
    heartbeatMs: deps.heartbeatMs,
  });
}
