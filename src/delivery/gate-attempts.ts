import type { Logger } from "../logger.js";
import { createKeyedMutex } from "../sessions/keyed-mutex.js";
import type { OutboxItem } from "./outbox-item.js";
import type { Outbox } from "./outbox.js";

/** What {@link createGateAttempts} sends with. */
export interface GateAttemptsDeps {
  outbox: Outbox;
  now: () => number;
  logger: Logger;
  sendItem: (item: OutboxItem, after?: Promise<unknown>) => Promise<OutboxItem>;
  /** told when an attempt on `lane` settled (the pump looks at the lane again) */
  onSettled: (lane: string) => void;
}

/** Sends the item if it is still pending, due, and the head of its lane; else returns it as it is. */
async function sendIfHead(deps: GateAttemptsDeps, id: string, lane: string, after: Promise<unknown> | undefined) {
  const item = deps.outbox.get(id);
  if (item?.status !== "pending" || item.nextAttemptAt > deps.now()) return item;
  const head = deps.outbox.laneHead(lane);
  return head && head.id !== id ? item : deps.sendItem(item, after);
}

/**
 * Send attempts: messages to one target (channel, recipient, account, thread) leave one at a time,
 * in order; each attempt sends an item only if it is still pending, due, and the oldest of its lane.
 */
export function createGateAttempts(deps: GateAttemptsDeps) {
  const lanes = createKeyedMutex();
  const busy = new Map<string, number>();
  const inFlight = new Set<Promise<unknown>>();
  // Each pending item's `after` (DeliveryRequest), in memory: any send of it in this process checks it first.
  const preconditions = new Map<string, Promise<unknown>>();

  /** Keeps the attempt counted on its lane (counted before it began) until it settles, and for {@link settle}. */
  function track(lane: string, run: Promise<unknown>): void {
    const settled = run.finally(() => {
      const left = busy.get(lane)! - 1;
      if (left > 0) busy.set(lane, left);
      else busy.delete(lane);
      deps.onSettled(lane);
    });
    inFlight.add(settled);
    // The caller handles a rejection of `run`; the tracked copy must not be reported as unhandled.
    const forget = () => inFlight.delete(settled);
    settled.then(forget, forget);
  }

  return {
    preconditions,
    /** True while an attempt on `lane` runs or waits for the lane. */
    busy: (lane: string) => busy.has(lane),
    /** Sends the item if it is still pending, due, and the oldest pending message of its lane. */
    attempt(id: string, lane: string): Promise<OutboxItem | undefined> {
      busy.set(lane, (busy.get(lane) ?? 0) + 1);
      const run = lanes.run(lane, () => sendIfHead(deps, id, lane, preconditions.get(id)));
      // Kept while the item may still be sent: by this attempt, or a later one from the pump when the lane was busy.
      run.then(
        (item) => item?.status !== "pending" && preconditions.delete(id),
        () => undefined,
      );
      track(lane, run);
      return run;
    },
    /** Settles when no attempt is in flight. */
    async settle(): Promise<void> {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}

/** The gate's send attempts. */
export type GateAttempts = ReturnType<typeof createGateAttempts>;
