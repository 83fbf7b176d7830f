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

/** Sessions whose items no attempt starts on: their partitions are being evicted ({@link GateAttempts.leave}). */
function createLeaves() {
  const leaves = new Set<(sessionKey: string) => boolean>();
  return {
    add: (only: (sessionKey: string) => boolean) => void leaves.add(only),
    /** True when an item of `sessionKey` must not be attempted now. */
    holds(sessionKey: string): boolean {
      for (const only of leaves) if (only(sessionKey)) return true;
      return false;
    },
    /** Ends the leaves covering any of `sessions` (their items left the image); all of them without. */
    end(sessions?: ReadonlySet<string>): void {
      for (const only of leaves) if (!sessions || [...sessions].some(only)) leaves.delete(only);
    },
  };
}

/** Sends the item if it is still pending, due, the head of its lane and not leaving; else returns it as it is. */
async function sendIfHead(
  deps: GateAttemptsDeps,
  id: string,
  lane: string,
  after: Promise<unknown> | undefined,
  leaving: (sessionKey: string) => boolean,
) {
  const item = deps.outbox.get(id);
  if (item?.status !== "pending" || item.nextAttemptAt > deps.now() || leaving(item.sessionKey)) return item;
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
  // Each attempt until it settles, with the session of its item.
  const inFlight = new Map<Promise<unknown>, string | undefined>();
  const leaves = createLeaves();
  // Each pending item's `after` (DeliveryRequest), in memory: any send of it in this process checks it first.
  const preconditions = new Map<string, Promise<unknown>>();

  /** Keeps the attempt counted on its lane (counted before it began) until it settles, and for {@link settle}. */
  function track(lane: string, run: Promise<unknown>, sessionKey: string | undefined): void {
    const settled = run.finally(() => {
      const left = busy.get(lane)! - 1;
      if (left > 0) busy.set(lane, left);
      else busy.delete(lane);
      deps.onSettled(lane);
    });
    inFlight.set(settled, sessionKey);
    // The caller handles a rejection of `run`; the tracked copy must not be reported as unhandled.
    const forget = () => inFlight.delete(settled);
    settled.then(forget, forget);
  }

  /** Settles when no attempt is in flight (of an item whose session matches `only`, when given). */
  async function settle(only?: (sessionKey: string) => boolean): Promise<void> {
    const of = () => [...inFlight].filter(([, key]) => !only || (key !== undefined && only(key))).map(([run]) => run);
    for (let runs = of(); runs.length > 0; runs = of()) await Promise.allSettled(runs);
  }

  return {
    preconditions,
    /** True while an attempt on `lane` runs or waits for the lane. */
    busy: (lane: string) => busy.has(lane),
    /** Sends the item if it is still pending, due, and the oldest pending message of its lane. */
    attempt(id: string, lane: string): Promise<OutboxItem | undefined> {
      busy.set(lane, (busy.get(lane) ?? 0) + 1);
      const sessionKey = deps.outbox.get(id)?.sessionKey;
      const run = lanes.run(lane, () => sendIfHead(deps, id, lane, preconditions.get(id), leaves.holds));
      // Kept while the item may still be sent: by this attempt, or a later one from the pump when the lane was busy.
      run.then(
        (item) => item?.status !== "pending" && preconditions.delete(id),
        () => undefined,
      );
      track(lane, run, sessionKey);
      return run;
    },
    /** Settles when no attempt is in flight. */
    settle: () => settle(),
    /** True when no attempt may start on an item of `sessionKey` (its partition is being evicted). */
    leaving: leaves.holds,
    /**
     * From now on no attempt starts on an item whose session matches `only`; settles once none is in
     * flight. It lasts until those items leave the image ({@link endLeaves} with their sessions) or
     * the next {@link endLeaves} without sessions (an adopt: sessions given up before may be back).
     */
    leave(only: (sessionKey: string) => boolean): Promise<void> {
      leaves.add(only);
      return settle(only);
    },
    endLeaves: leaves.end,
  };
}

/** The gate's send attempts. */
export type GateAttempts = ReturnType<typeof createGateAttempts>;
