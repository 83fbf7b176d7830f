import { DEFAULT_RETRY } from "../config/channel-table.js";
import type { SessionConfig } from "../config/schema/session.js";
import type { Logger } from "../logger.js";
import { normalizeDeliveryContext } from "../sessions/delivery-context.js";
import type { ChannelAdapter } from "./channel-adapter.js";
import { type DeliveryRequest, type DeliveryResult, deliveryResultOf } from "./delivery-request.js";
import { type GateAttempts, createGateAttempts } from "./gate-attempts.js";
import { chunksFor, policyAllows } from "./gate-admit.js";
import { type GateTimers, MAX_TIMER_MS, createWakeTimer, nodeTimers } from "./gate-timer.js";
import { type DeliveryObserver, createItemSender, outboxLogFields } from "./item-sender.js";
import type { OutboxItem } from "./outbox-item.js";
import { type Outbox, laneOf } from "./outbox.js";
import type { RetryOptions } from "./retry-delay.js";

/** Dependencies of {@link createDeliveryGate}. */
export interface DeliveryGateDeps {
  /** the running adapter for a channel name, if any */
  adapters: (channel: string) => ChannelAdapter | undefined;
  outbox: Outbox;
  /** the current `session.sendPolicy` (read on every delivery, so config reloads apply) */
  policy: () => SessionConfig["sendPolicy"] | undefined;
  logger: Logger;
  now?: () => number;
  timers?: GateTimers;
  /** jitter source, 0 <= x < 1 */
  random?: () => number;
  /**
   * The retry setting of the account a target is sent from (`channels.<name>.retry`, resolved per
   * account); read on every failure, so config reloads apply. Default: `DEFAULT_RETRY` for every target.
   */
  retryFor?: (target: OutboxItem["target"]) => RetryOptions;
  /** fields that replace the resolved retry setting of every target (tests shorten the delays) */
  retry?: Partial<RetryOptions>;
  /** told each message's outcome, blocked ones included (metrics); default none */
  observe?: DeliveryObserver;
  /** asked before every platform send (a PostgreSQL owner's lease age, src/cluster/send-guard.ts); default always */
  mayStillSend?: () => Promise<boolean>;
  /** asked before every chunk: whether this gateway holds the chunk's lane (a PostgreSQL owner's lane claims, src/cluster/lane-claims.ts); default always */
  holdsLane?: (lane: string, sessionKey: string) => Promise<boolean>;
  /**
   * told when a lane's last pending message went (sent, or failed for good) and no attempt runs on
   * it: nothing of that chat waits here (many mode releases its lane claim); default none
   */
  laneEmptied?: (lane: string) => void;
}

/** The one way out: every outbound message leaves through {@link DeliveryGate.deliver}. */
export type DeliveryGate = ReturnType<typeof createDeliveryGate>;

/**
 * Admits a request (sendPolicy, chunks), records it in the outbox and attempts it at once. A key
 * the outbox already holds sends nothing new and reports what became of the first request.
 */
async function deliverThrough(deps: DeliveryGateDeps, attempts: GateAttempts, request: DeliveryRequest) {
  const { outbox, logger } = deps;
  const known = outbox.get(request.idempotencyKey);
  if (known) {
    logger.debug({ ...outboxLogFields(known), status: known.status }, "duplicate idempotency key; not sent again");
    return deliveryResultOf((await attempts.attempt(known.id, laneOf(known.target))) ?? known);
  }
  const target = normalizeDeliveryContext(request.target) ?? request.target;
  const adapter = deps.adapters(target.channel);
  if (!policyAllows(deps, request, target, adapter)) return { status: "denied", messageIds: [] } as DeliveryResult;
  const chunks = chunksFor(adapter, request.text);
  if (chunks.length === 0) {
    const fields = { sessionKey: request.sessionKey.key, kind: request.kind, id: request.idempotencyKey };
    logger.debug(fields, "nothing to deliver: the text is blank");
    return { status: "delivered", messageIds: [] } as DeliveryResult;
  }
  // A concurrent request with the same key may have enqueued first: `enqueue` then returns its item.
  // Not waited for on its own: the first chunk's claim (the item's whole row again, later in the
  // same journal) is synced with it, so the reply waits for one sync, not two.
  const { item, written } = outbox.enqueueNow({
    id: request.idempotencyKey,
    sessionKey: request.sessionKey.key,
    target,
    kind: request.kind,
    chunks,
    replyToMessageId: request.replyToMessageId,
  });
  written.catch(() => undefined); // judged below, once the attempt has settled
  if (request.after && item.status === "pending" && item.sent === 0) attempts.preconditions.set(item.id, request.after);
  const attempted = await attempts.attempt(item.id, laneOf(item.target));
  // A claim or a record of the item was acknowledged: that line is the item's whole row again,
  // so the item is durable whatever became of its first line. Otherwise wait for the first line.
  const recordedLater =
    attempted !== undefined &&
    (attempted.sending !== undefined || attempted.sent > 0 || attempted.status !== "pending");
  if (!recordedLater) await written;
  return deliveryResultOf(attempted ?? item);
}

/**
 * Waits (at most `withinMs`) until nothing is left that could go out by then; resolves with how
 * many messages are still pending. Items whose next try falls after the deadline are not waited for.
 */
async function drainOutbox(
  outbox: Outbox,
  timers: GateTimers,
  now: () => number,
  next: () => Promise<void>,
  withinMs: number,
) {
  const deadline = now() + withinMs;
  let handle: unknown;
  const timedOut = new Promise<void>((resolve) => {
    handle = timers.setTimeout(resolve, Math.min(MAX_TIMER_MS, Math.max(0, withinMs)), true);
  });
  try {
    const dueInTime = () => outbox.pending().some((item) => item.nextAttemptAt <= deadline);
    while (dueInTime() && now() < deadline) await Promise.race([next(), timedOut]);
  } finally {
    timers.clearTimeout(handle);
  }
  return outbox.pending().length;
}

/** The retry setting of a target: its account's, with the fields tests replace. */
function retryOf(deps: DeliveryGateDeps): (target: OutboxItem["target"]) => RetryOptions {
  const resolve = deps.retryFor ?? (() => DEFAULT_RETRY);
  return (target) => ({ ...resolve(target), ...deps.retry });
}

/** The pump: starts each lane's due head when its lane is free, and sets the retry timer for the next one. */
function createPump(deps: DeliveryGateDeps, now: () => number, timers: GateTimers) {
  const { outbox, logger } = deps;
  let running = false;
  // Called (and replaced) whenever a send attempt settles: what `drain` waits on.
  let onAttemptSettled = () => {};
  const wake = createWakeTimer(timers, now, () => pump());
  const attempts = createGateAttempts({
    outbox,
    now,
    logger,
    sendItem: createItemSender({ ...deps, now, retry: retryOf(deps) }),
    onSettled: (lane) => {
      pumpLane(lane);
      onAttemptSettled();
    },
  });
  function pumpLane(lane: string): void {
    if (!running || attempts.busy(lane)) return; // a busy lane pumps again when its send settles
    const head = outbox.laneHead(lane);
    if (!head) return void deps.laneEmptied?.(lane);
    // A leaving session's item waits for its eviction (the lane is pumped then), its retry timer unset.
    if (attempts.leaving(head.sessionKey)) return;
    if (head.nextAttemptAt > now()) wake.at(head.nextAttemptAt);
    else
      attempts
        .attempt(head.id, lane)
        .catch((err: unknown) => logger.error({ ...outboxLogFields(head), err }, "delivery attempt crashed"));
  }
  function pump(): void {
    for (const lane of outbox.pendingLanes()) pumpLane(lane);
  }
  // An evicted partition's items left: their lanes may have emptied, or have a new head.
  outbox.onEvicted((lanes, sessions) => {
    attempts.endLeaves(sessions);
    for (const lane of lanes) pumpLane(lane);
  });
  const nextAttemptSettled = () => new Promise<void>((resolve) => (onAttemptSettled = resolve));
  const setRunning = (on: boolean) => {
    running = on;
    if (on) pump();
    else wake.clear();
  };
  return { attempts, setRunning, nextAttemptSettled, pump };
}

/**
 * Creates the delivery gate: sendPolicy (deny blocks delivery and is logged, unless the message
 * answers an owner's command), chunking to the adapter's limit, a durable outbox with idempotency
 * keys, and retries with backoff that resume at the first unsent chunk.
 */
export function createDeliveryGate(deps: DeliveryGateDeps) {
  const { outbox } = deps;
  const now = deps.now ?? Date.now;
  const timers = deps.timers ?? nodeTimers;
  const { attempts, setRunning, nextAttemptSettled, pump } = createPump(deps, now, timers);
  return {
    /** Applies sendPolicy, chunks, records in the outbox and tries to send right away. */
    deliver: (request: DeliveryRequest): Promise<DeliveryResult> => deliverThrough(deps, attempts, request),
    /** Resumes pending items (after a restart) and keeps retrying them on a timer. */
    start: (): void => setRunning(true),
    /**
     * Tries every pending lane now, as `start` does (a started gate only): the core calls it after it
     * adopted partitions, whose items the outbox has just indexed. Ends every leave (below): a
     * session given up before may be back.
     */
    pump(): void {
      attempts.endLeaves();
      pump();
    },
    /**
     * From now on no attempt (first try, retry, a lane's next send) starts on an item whose session matches
     * `only`; settles once none of theirs is in flight (a send in flight finishes). The core calls it
     * right before the state port evicts those sessions' partitions; it ends when their items leave
     * the outbox, or at the next `pump`. Evict and adopt run one after the other.
     */
    leave: (only: (sessionKey: string) => boolean): Promise<void> => attempts.leave(only),
    /** Waits (at most `withinMs`) for what could go out by then, sends and retries going on; resolves with how many are still pending. */
    drain: (withinMs: number): Promise<number> => drainOutbox(outbox, timers, now, nextAttemptSettled, withinMs),
    /** Stops the retry timer and waits for sends in flight; pending items stay in the outbox. */
    async stop(): Promise<void> {
      setRunning(false);
      await attempts.settle();
    },
    /** Settles when no send is in flight (retries scheduled for later do not count). */
    idle: (): Promise<void> => attempts.settle(),
    /** Recent final failures, newest first, optionally of one session (canonical key), for `/status`. */
    failures: (sessionKey?: string): OutboxItem[] => outbox.failures(sessionKey),
    /** How many messages wait to be delivered. */
    pending: (): number => outbox.pending().length,
    /** Messages still waiting to be delivered (a retry may be due later), oldest first, optionally of one session. */
    pendingItems(sessionKey?: string): OutboxItem[] {
      const all = outbox.pending();
      return sessionKey === undefined ? all : all.filter((item) => item.sessionKey === sessionKey);
    },
  };
}
