// The owner's side of the hand-off inbox (src/cluster/handoff-sql.ts, docs/scale-out.md "Inbound
// anywhere"): it LISTENs on a connection of its own and drains the rows other gateways stored,
// at start (a takeover), on each NOTIFY, before it stores inbound of its own (arrival order is
// kept across gateways) and every heartbeatMs as a safety net. Each row goes through the owner's
// own intake, which dedupes by the row's key, and is deleted in the commit that makes that intake
// durable, or after it when the intake stored nothing at once (./handoff-pass.ts).
// Paced: a failed row is put off with a backoff (HANDOFF_BACKOFF), a storage failure pauses the
// drain, the pass an owner's own inbound waits for skips rows that failed, and that wait is bounded.
import type { StartTurn } from "../agents/stored-turn.js";
import type { ChannelAdapter } from "../delivery/channel-adapter.js";
import {
  type HandoffKind,
  type HandoffRow,
  handoffChannel,
  type HANDOFF_BACKOFF,
  type HANDOFF_SET_ASIDE,
} from "../cluster/handoff-sql.js";
import { listenChannel } from "../cluster/listen-channel.js";
import { hookHandoffIntake } from "../hooks/hook-handoff.js";
import type { InboundOptions, InboundResult } from "../inbound/inbound-types.js";
import type { Logger } from "../logger.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import { rowWriterOf } from "../state/postgres/row-writer.js";
import { chatSendHandoffIntake } from "./chat-send-intake.js";
import { inboxEntryIntake } from "./inbox-forwarding.js";
import { type HandoffIntake, type PassDeps, pass } from "./handoff-pass.js";

/** What {@link createHandoffDrain} needs. */
export interface HandoffDrainDeps {
  /** the owner's database (fenced: a fenced-out owner deletes nothing); its row writer deletes the rows taken in */
  database: PostgresDatabase;
  /** each kind's intake; a row of a kind not listed fails (set aside in time) */
  intake: Record<string, HandoffIntake>;
  logger: Logger;
  /** the safety net's period (`cluster.heartbeatMs`) */
  heartbeatMs: number;
  /** the LISTEN connection's reconnect pause; default 500 ms */
  retryMs?: number;
  /** when a failing row is set aside; default {@link HANDOFF_SET_ASIDE} */
  setAside?: { attempts: number; minAgeMs: number };
  /** how long a failed row is put off, and the drain paused after a storage failure; default {@link HANDOFF_BACKOFF} */
  backoff?: { firstMs: number; maxMs: number };
  /** how long an owner's own inbound waits for the pass before it is stored anyway; default 3 s */
  waitMs?: number;
  /** the clock of the storage pause; default Date.now */
  now?: () => number;
  /** `cluster.owners: "many"`: the partitions this gateway holds, read at each pass; default: it drains every row */
  held?: () => ReadonlySet<number>;
  /** with `held`: whether it holds `schema:writer` (then it also drains the rows of no part); default true */
  global?: () => boolean;
}

/** Whether a NOTIFY's payload (a row's part, "" for none; undefined: listening again) concerns this gateway. */
function wakes(deps: HandoffDrainDeps, payload: string | undefined): boolean {
  if (payload === undefined || !deps.held) return true;
  if (payload === "") return deps.global?.() ?? true;
  return deps.held().has(Number(payload));
}

/** The owner's drain of the hand-off inbox. */
export interface HandoffDrain {
  /** LISTENs, drains once and drains every heartbeatMs from now on */
  start(): Promise<void>;
  /** a pass that begins after this call (rows committed and due before it are taken in when it settles); never rejects */
  drain(): Promise<void>;
  /**
   * Before an owner's own hook, webhook update or `chat.send` is stored: a pass over the rows never tried (not
   * the failing ones) that begins after this call, waited for until it queued the intake of each
   * row it read (not their commit), at most `waitMs` (past it, order is best effort); never rejects.
   */
  beforeOwnInbound(): Promise<void>;
  /**
   * Before an owner's `chat.abort`: such a pass, waited for until it queued the intake of each row
   * it read and those were handled up to their session's queue (so the abort finds them), at most
   * `waitMs`; never rejects.
   */
  beforeOwnAbort(): Promise<void>;
  /** stops listening and draining; waits for the pass in flight */
  stop(): Promise<void>;
}

/** A pass asked for: `queued` once it queued the intake of every row it read (its last page), `done` once it ended. */
interface Pass {
  queued: Promise<void>;
  done: Promise<void>;
}

const NONE: Pass = { queued: Promise.resolve(), done: Promise.resolve() };

/**
 * One pass at a time; a pass asked for during one runs right after it (a full one if any asker
 * wanted failing rows too). While paused (a storage failure) a pass is skipped: the heartbeat tries again.
 */
function passes(deps: HandoffDrainDeps, stopped: () => boolean) {
  const now = deps.now ?? Date.now;
  let pausedUntil = 0;
  const passDeps: PassDeps = {
    ...deps,
    writer: rowWriterOf(deps.database),
    pause: (ms) => {
      pausedUntil = now() + ms;
    },
  };
  let running: Promise<void> | undefined;
  let queued: { fresh: boolean; next: Promise<Pass> } | undefined;
  const run = (fresh: boolean, queuedAll: () => void) =>
    pass(passDeps, fresh, stopped, queuedAll)
      .catch((err: unknown) =>
        deps.logger.warn({ err }, "hand-off inbox not drained; tried again at the next heartbeat"),
      )
      .finally(queuedAll);
  const drain = (fresh: boolean): Pass => {
    if (stopped() || now() < pausedUntil) return { queued: Promise.resolve(), done: Promise.resolve() };
    if (!running) {
      let queuedAll!: () => void;
      const intakesQueued = new Promise<void>((resolve) => {
        queuedAll = resolve;
      });
      running = run(fresh, queuedAll).finally(() => {
        running = undefined;
      });
      return { queued: intakesQueued, done: running };
    }
    if (queued) queued.fresh &&= fresh;
    else {
      const next: { fresh: boolean; next: Promise<Pass> } = { fresh, next: Promise.resolve(NONE) };
      next.next = running.then(() => {
        queued = undefined;
        return drain(next.fresh);
      });
      queued = next;
    }
    const { next } = queued;
    return { queued: next.then((p) => p.queued), done: next.then((p) => p.done) };
  };
  return { drain, inFlight: () => running };
}

/** Waits for `work` at most `ms`; true when it settled in time. */
async function within(work: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = await Promise.race([work.then(() => true as const), late]);
  clearTimeout(timer);
  return settled;
}

/** The owner's drain (see {@link HandoffDrain}). */
export function createHandoffDrain(deps: HandoffDrainDeps): HandoffDrain {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const scheduled = passes(deps, () => stopped);
  const drain = () => scheduled.drain(false).done;
  const listening = listenChannel({
    pool: deps.database.pool,
    channel: handoffChannel(deps.database.schema),
    logger: deps.logger,
    // Rows stored while it was not listening are found by the pass at (re)connect; a forward for a partition held elsewhere wakes nothing.
    onNotify: (payload) => void (wakes(deps, payload) && drain()),
    warning: "hand-off inbox not listened to; drained every heartbeat meanwhile",
    ...(deps.retryMs !== undefined && { retryMs: deps.retryMs }),
  });
  const waitMs = deps.waitMs ?? 3_000;
  return {
    async start() {
      timer = setInterval(() => void drain(), deps.heartbeatMs);
      timer.unref();
      await listening.open();
      await drain();
    },
    drain,
    async beforeOwnInbound() {
      // Its own store queues after the pass's intakes (the same batch of the writer or a later one), so
      // it need not wait for their commit: a session's turns start in the order their entries were queued.
      if (await within(scheduled.drain(true).queued, waitMs)) return;
      deps.logger.warn(
        { waitMs },
        "hand-off inbox pass still running; this inbound is stored without it (order best effort)",
      );
    },
    async beforeOwnAbort() {
      const handled = async () => void (await Promise.all(Object.values(deps.intake).map((i) => i.handled?.())));
      if (await within(scheduled.drain(true).queued.then(handled), waitMs)) return;
      deps.logger.warn({ waitMs }, "hand-off inbox pass still running; this abort may miss a message stored before it");
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await listening.close();
      await scheduled.inFlight();
    },
  };
}

/** What the owner takes handed-off inbound in with: its stored turns, its pipeline (once opened), its adapters; which rows it drains. */
export interface OwnerIntakes extends Pick<HandoffDrainDeps, "held" | "global"> {
  start: StartTurn;
  /** the inbound pipeline's `accept`; called only once the drain started (after the pipeline opened) */
  accept: (message: unknown, options: InboundOptions) => Promise<{ result: Promise<InboundResult> }>;
  adapters: Map<string, ChannelAdapter>;
}

/**
 * The owner's drain on PostgreSQL with a cluster (undefined otherwise: on local files no other
 * gateway exists): hook turns go through `start` (the stored turns' `startTurn`), as the owner's own
 * hooks do; a `chat.send` through the pipeline's `accept`, as the owner's own; a platform event
 * through its adapter's `takeHandedOff`, as its own webhook does.
 */
export function ownerHandoffDrain(
  database: HandoffDrainDeps["database"] | undefined,
  deps: OwnerIntakes & { logger: Logger; heartbeatMs: number },
): HandoffDrain | undefined {
  if (!database) return undefined;
  const intake: Record<HandoffKind, HandoffIntake> = {
    hook: hookHandoffIntake(deps.start),
    "chat-send": chatSendHandoffIntake(deps.accept),
    "inbox-entry": inboxEntryIntake(deps),
  };
  // An adapter's intake queues its store before its first await (its contract): a pass takes its rows in together.
  const storedAtOnce = (take: (row: HandoffRow) => Promise<void>) => Object.assign(take, { storesAtOnce: true });
  for (const adapter of deps.adapters.values())
    if (adapter.takeHandedOff)
      intake[`${adapter.id}-update`] = storedAtOnce((row) => adapter.takeHandedOff!(row.account, row.payload));
  return createHandoffDrain({
    database,
    intake,
    logger: deps.logger,
    heartbeatMs: deps.heartbeatMs,
    ...(deps.held && { held: deps.held }),
    ...(deps.global && { global: deps.global }),
  });
}
