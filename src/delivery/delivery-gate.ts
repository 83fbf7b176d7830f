import { DEFAULT_RETRY } from "../config/schema/channel-defaults.js";
import type { SessionConfig } from "../config/schema/session.js";
import type { Logger } from "../logger.js";
import { normalizeDeliveryContext } from "../sessions/delivery-context.js";
import { createKeyedMutex } from "../sessions/keyed-mutex.js";
import type { ChannelAdapter } from "./channel-adapter.js";
import { chunkText } from "./chunk-text.js";
import { type DeliveryRequest, type DeliveryResult, deliveryResultOf } from "./delivery-request.js";
import { type DeliveryObserver, createItemSender, outboxLogFields } from "./item-sender.js";
import type { OutboxItem } from "./outbox-item.js";
import { type Outbox, laneOf } from "./outbox.js";
import type { RetryOptions } from "./retry-delay.js";
import { resolveSendPolicy } from "./send-policy.js";

/** The timer functions the gate uses for retries (injectable for tests). */
interface GateTimers {
  /** `keepAlive`: the timer holds the process open (a stop's deadline); retry timers do not */
  setTimeout(callback: () => void, ms: number, keepAlive?: boolean): unknown;
  clearTimeout(handle: unknown): void;
}

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
}

/** The one way out: every outbound message leaves through {@link DeliveryGate.deliver}. */
export type DeliveryGate = ReturnType<typeof createDeliveryGate>;

const MAX_TIMER_MS = 2_147_483_647;
const nodeTimers: GateTimers = {
  // unref: a pending retry is on disk, so it must not keep the process alive.
  setTimeout: (callback, ms, keepAlive) => {
    const handle = setTimeout(callback, ms);
    return keepAlive ? handle : handle.unref();
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * The gateway's own clients are the owner's window onto the session: what reaches them is shown,
 * whatever sendPolicy says. The one place the delivery path reads `gatewayClients`.
 */
function servesOwner(adapter: ChannelAdapter | undefined): boolean {
  return adapter?.capabilities.gatewayClients === true;
}

/**
 * Creates the delivery gate: sendPolicy (deny blocks delivery and is logged, unless the message
 * answers an owner's command), chunking to the adapter's limit, a durable outbox with idempotency
 * keys, and retries with backoff that resume at the first unsent chunk.
 */
export function createDeliveryGate(deps: DeliveryGateDeps) {
  const { outbox, logger } = deps;
  const now = deps.now ?? Date.now;
  const timers = deps.timers ?? nodeTimers;
  const resolveRetry = deps.retryFor ?? (() => DEFAULT_RETRY);
  const retry = (target: OutboxItem["target"]): RetryOptions => ({ ...resolveRetry(target), ...deps.retry });
  const lanes = createKeyedMutex();
  const busy = new Map<string, number>();
  const inFlight = new Set<Promise<unknown>>();
  // Each pending item's `after` (DeliveryRequest), in memory: any send of it in this process checks it first.
  const preconditions = new Map<string, Promise<unknown>>();
  let running = false;
  // Called (and replaced) whenever a send attempt settles: what `drain` waits on.
  let onAttemptSettled = () => {};
  const nextAttemptSettled = () => new Promise<void>((resolve) => (onAttemptSettled = resolve));
  let timer: unknown;
  let timerAt = Infinity;

  const sendItem = createItemSender({ ...deps, now, retry });

  /** Sends the item if it is still pending, due, and the oldest pending message of its lane. */
  function attempt(id: string, lane: string): Promise<OutboxItem | undefined> {
    busy.set(lane, (busy.get(lane) ?? 0) + 1);
    const run = lanes.run(lane, async () => {
      const item = outbox.get(id);
      if (item?.status !== "pending" || item.nextAttemptAt > now()) return item;
      const head = outbox.laneHead(lane);
      return head && head.id !== id ? item : sendItem(item, preconditions.get(id));
    });
    // Kept while the item may still be sent: by this attempt, or a later one from the pump when the lane was busy.
    run.then(
      (item) => item?.status !== "pending" && preconditions.delete(id),
      () => undefined,
    );
    const settled = run.finally(() => {
      const left = busy.get(lane)! - 1;
      if (left > 0) busy.set(lane, left);
      else busy.delete(lane);
      pumpLane(lane);
      onAttemptSettled();
    });
    inFlight.add(settled);
    // The caller handles a rejection of `run`; the tracked copy must not be reported as unhandled.
    settled.then(
      () => inFlight.delete(settled),
      () => inFlight.delete(settled),
    );
    return run;
  }

  /** Retries the pump at `at` unless an earlier retry is already set. */
  function wakeAt(at: number): void {
    if (at >= timerAt) return;
    if (timer !== undefined) timers.clearTimeout(timer);
    timerAt = at;
    timer = timers.setTimeout(
      () => {
        timer = undefined;
        timerAt = Infinity;
        pump();
      },
      Math.min(MAX_TIMER_MS, Math.max(0, at - now())),
    );
  }

  /** Starts the lane's head if it is due and the lane is not already sending; else sets the timer for it. */
  function pumpLane(lane: string): void {
    if (!running || busy.has(lane)) return; // a busy lane pumps again when its send settles
    const head = outbox.laneHead(lane);
    if (!head) return;
    if (head.nextAttemptAt > now()) wakeAt(head.nextAttemptAt);
    else
      attempt(head.id, lane).catch((err: unknown) =>
        logger.error({ ...outboxLogFields(head), err }, "delivery attempt crashed"),
      );
  }

  /** Starts every due lane head that is not already sending, and sets the timer for the next one. */
  function pump(): void {
    for (const lane of outbox.pendingLanes()) pumpLane(lane);
  }

  async function settle(): Promise<void> {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  }

  return {
    /**
     * Applies sendPolicy, chunks, records in the outbox and tries to send right away. A key the
     * outbox already holds sends nothing new and reports what became of the first request.
     */
    async deliver(request: DeliveryRequest): Promise<DeliveryResult> {
      const known = outbox.get(request.idempotencyKey);
      if (known) {
        logger.debug({ ...outboxLogFields(known), status: known.status }, "duplicate idempotency key; not sent again");
        return deliveryResultOf((await attempt(known.id, laneOf(known.target))) ?? known);
      }
      const target = normalizeDeliveryContext(request.target) ?? request.target;
      const sessionKey = request.sessionKey.key;
      const verdict = resolveSendPolicy({
        policy: deps.policy(),
        entry: request.entry,
        key: request.sessionKey,
        channel: target.channel,
      });
      if (verdict.decision === "deny") {
        const audit = {
          sessionKey,
          channel: target.channel,
          to: target.to,
          kind: request.kind,
          source: verdict.source,
          ruleIndex: verdict.ruleIndex,
        };
        if (!request.bypassPolicy && !servesOwner(deps.adapters(target.channel))) {
          logger.info(audit, "delivery denied by sendPolicy");
          deps.observe?.(target, "blocked", "sendPolicy");
          return { status: "denied", messageIds: [] };
        }
        logger.info(audit, "sendPolicy deny bypassed: an owner's command, or the gateway's own clients");
      }
      const adapter = deps.adapters(target.channel);
      const chunks = adapter
        ? chunkText(request.text, adapter.capabilities.maxTextLength, {
            ...(adapter.capabilities.maxLinesPerMessage !== undefined && {
              maxLines: adapter.capabilities.maxLinesPerMessage,
            }),
          })
        : /\S/.test(request.text)
          ? [request.text]
          : [];
      if (chunks.length === 0) {
        logger.debug(
          { sessionKey, kind: request.kind, id: request.idempotencyKey },
          "nothing to deliver: the text is blank",
        );
        return { status: "delivered", messageIds: [] };
      }
      // A concurrent request with the same key may have enqueued first: `enqueue` then returns its item.
      // Not waited for on its own: the first chunk's claim (the item's whole row again, later in the
      // same journal) is synced with it, so the reply waits for one sync, not two.
      const { item, written } = outbox.enqueueNow({
        id: request.idempotencyKey,
        sessionKey,
        target,
        kind: request.kind,
        chunks,
        replyToMessageId: request.replyToMessageId,
      });
      written.catch(() => undefined); // judged below, once the attempt has settled
      if (request.after && item.status === "pending" && item.sent === 0) preconditions.set(item.id, request.after);
      const attempted = await attempt(item.id, laneOf(item.target));
      // A claim or a record of the item was acknowledged: that line is the item's whole row again,
      // so the item is durable whatever became of its first line. Otherwise wait for the first line.
      const recordedLater =
        attempted !== undefined &&
        (attempted.sending !== undefined || attempted.sent > 0 || attempted.status !== "pending");
      if (!recordedLater) await written;
      return deliveryResultOf(attempted ?? item);
    },

    /** Resumes pending items (after a restart) and keeps retrying them on a timer. */
    start(): void {
      running = true;
      pump();
    },

    /**
     * Waits (at most `withinMs`) until nothing is left that could go out by then, sends and retries
     * going on as usual: a graceful stop delivers what the drained turns produced. Resolves with
     * how many messages are still pending (they stay in the outbox for the next start).
     */
    async drain(withinMs: number): Promise<number> {
      const deadline = now() + withinMs;
      let handle: unknown;
      const timedOut = new Promise<void>((resolve) => {
        handle = timers.setTimeout(resolve, Math.min(MAX_TIMER_MS, Math.max(0, withinMs)), true);
      });
      try {
        // Items whose next try falls after the deadline (a platform in a long outage) are not waited for.
        const dueInTime = () => outbox.pending().some((item) => item.nextAttemptAt <= deadline);
        while (dueInTime() && now() < deadline) await Promise.race([nextAttemptSettled(), timedOut]);
      } finally {
        timers.clearTimeout(handle);
      }
      return outbox.pending().length;
    },

    /** Stops the retry timer and waits for sends in flight; pending items stay in the outbox. */
    async stop(): Promise<void> {
      running = false;
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
      timerAt = Infinity;
      await settle();
    },

    /** Settles when no send is in flight (retries scheduled for later do not count). */
    idle: settle,

    /** Recent final failures, newest first, optionally of one session (canonical key), for `/status`. */
    failures(sessionKey?: string): OutboxItem[] {
      return outbox.failures(sessionKey);
    },

    /** How many messages wait to be delivered. */
    pending(): number {
      return outbox.pending().length;
    },

    /** Messages still waiting to be delivered (a retry may be due later), oldest first, optionally of one session. */
    pendingItems(sessionKey?: string): OutboxItem[] {
      const all = outbox.pending();
      return sessionKey === undefined ? all : all.filter((item) => item.sessionKey === sessionKey);
    },
  };
}
