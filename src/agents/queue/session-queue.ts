import { type QueueEnv, enqueueTurn } from "../enqueue-turn.js";
import type { RunRecord } from "../run-registry.js";
import type { TurnRequest } from "../turn-request.js";
import { type Batch, type QueueItem, type SessionState, batchRequest, canJoin } from "./queue-batch.js";
import { overflow } from "./queue-overflow.js";
import type { QueueSettings } from "./queue-settings.js";
import { type BindEntries, canSteer, dropSteering, takeSteering, tie } from "./queue-steering.js";
import { type QueueTimers, waitQuiet } from "./wait-quiet.js";

/** One stored channel message offered to its session's queue. */
export interface QueueOffer {
  entryId: string;
  /** the turn the message alone would be (run id: the entry's; `message` set) */
  request: TurnRequest;
  bind: BindEntries;
  /** a replay of a turn its messages were tied to before a crash: exactly these messages, under that run id */
  replay?: { runId: string; followers: Array<{ entryId: string; request: TurnRequest }> };
}

/** What every session queue of a runtime shares: the lane, the clock and the per-session state. */
interface Queues {
  queue: QueueEnv;
  timers: QueueTimers;
  now: () => number;
  sessions: Map<string, SessionState>;
  /** messages offered so far: each one's arrival order */
  arrivals: number;
}

/**
 * The session queues (`session.queue`, docs/config.md): which turn answers each channel message.
 * followup gives each message its own turn; collect gathers the messages that wait (and come within
 * `debounceMs` of each other) into the next turn; steer hands them to the running turn between its
 * model steps; interrupt aborts the running turn. Beyond `cap` waiting messages, `overflow` says
 * what happens. Every turn runs on the session's lane like any other.
 */
export function createSessionQueues(queue: QueueEnv, timers: QueueTimers) {
  const qs: Queues = { queue, timers, now: queue.env.now ?? Date.now, sessions: new Map(), arrivals: 0 };
  return {
    /** Messages waiting in `key`'s queue (for the next turns, shortened ones included, and to steer the running one) and the turns they make. */
    waiting(key: string): { messages: number; turns: number } {
      const state = qs.sessions.get(key);
      if (!state) return { messages: 0, turns: 0 };
      const steering = state.running?.steering.length ?? 0;
      return { messages: state.open.reduce((n, b) => n + b.items.length, steering), turns: state.open.length };
    },

    /** `/stop`: the messages waiting to steer the running turn go with it (settled as aborted); returns how many. */
    dropSteering: (key: string): number => dropSteering(qs.sessions.get(key)?.running, key, qs.now()),

    /**
     * Offers a stored channel message to its session's queue; returns the run id of the turn that
     * will answer it (as things stand) and `done`, settling with that turn's record, or with an
     * aborted record when the message was not run (its sender is told why).
     */
    offer: (offer: QueueOffer, settings: QueueSettings): { runId: string; done: Promise<RunRecord> } =>
      offerMessage(qs, offer, settings),
  };
}

/** Places an offered message (or starts its replay); the run id of its turn and its `done`. */
function offerMessage(qs: Queues, offer: QueueOffer, settings: QueueSettings) {
  const key = offer.request.parsed.key;
  const state = stateOf(qs, key);
  const { item, done } = itemOf(qs, offer.entryId, offer.request);
  if (offer.replay) {
    const batch = newBatch(qs, key, item, offer.replay.runId);
    const followers = offer.replay.followers.map((f) => itemOf(qs, f.entryId, f.request));
    batch.items.push(...followers.map((f) => f.item));
    startBatch(qs, state, batch, settings, offer.bind);
    return { runId: batch.runId, done };
  }
  if (settings.mode === "interrupt") interrupt(qs, state, item);
  const runId = place(qs, state, item, settings, offer.bind);
  overflow(qs.queue.env, state, item, settings);
  return { runId, done };
}

/** The session's queue state, made on its first message. */
function stateOf(qs: Queues, key: string): SessionState {
  const known = qs.sessions.get(key);
  if (known) return known;
  const state: SessionState = { open: [] };
  qs.sessions.set(key, state);
  return state;
}

/** Drops a session's state once nothing waits or runs in it. */
function forget(qs: Queues, key: string, state: SessionState): void {
  if (!state.running && state.open.length === 0) qs.sessions.delete(key);
}

/** A new queue item (next in arrival order) and the promise its turn's record settles. */
function itemOf(qs: Queues, entryId: string, request: TurnRequest): { item: QueueItem; done: Promise<RunRecord> } {
  let settle!: (record: RunRecord) => void;
  const done = new Promise<RunRecord>((resolve) => (settle = resolve));
  return { item: { entryId, request, seq: qs.arrivals++, settle }, done };
}

/** A batch led by `item`; sealed (and already tied) under `sealedRunId` for a replay. */
function newBatch(qs: Queues, key: string, item: QueueItem, sealedRunId?: string): Batch {
  const runId = sealedRunId ?? item.request.runId!;
  const sealed = !!sealedRunId;
  return { runId, key, items: [item], lastAt: qs.now(), state: "open", sealed, tied: sealed, steering: [] };
}

/** Queues a batch's turn on the lane; its messages settle with the turn's record when it ends. */
function startBatch(qs: Queues, state: SessionState, batch: Batch, settings: QueueSettings, bind: BindEntries): void {
  state.open.push(batch);
  const lead = batch.items[0]!.request;
  const prepare = async (signal: AbortSignal) => {
    if (batch.state !== "open") return undefined; // every message of it went elsewhere
    if (settings.mode === "collect" && !batch.sealed)
      await waitQuiet(() => batch.lastAt + settings.debounceMs - qs.now(), qs.timers, signal);
    batch.state = "running";
    state.open.splice(state.open.indexOf(batch), 1);
    state.running = batch;
    // One message under its own run id needs no tie: its entry's run id is the turn's already.
    if (batch.items.length > 1 && !batch.tied) await tie(batch, batch.items, bind);
    const request = batchRequest(batch);
    return settings.mode === "steer" ? { ...request, steer: () => takeSteering(batch, bind) } : request;
  };
  const { done } = enqueueTurn(qs.queue, { ...lead, runId: batch.runId }, prepare);
  void done.then((record) => endBatch(qs, state, batch, record, settings, bind));
}

/** A batch's turn ended: its messages settle with it; messages that came too late to steer it get the next turn. */
function endBatch(
  qs: Queues,
  state: SessionState,
  batch: Batch,
  record: RunRecord,
  settings: QueueSettings,
  bind: BindEntries,
) {
  const wasOpen = batch.state === "open";
  batch.state = "ended";
  if (wasOpen) state.open.splice(state.open.indexOf(batch), 1);
  if (state.running === batch) delete state.running;
  for (const item of batch.items) item.settle(record);
  const late = batch.steering.splice(0);
  if (late.length > 0) {
    const next = newBatch(qs, batch.key, late[0]!);
    next.items.push(...late.slice(1));
    startBatch(qs, state, next, settings, bind);
  }
  forget(qs, batch.key, state);
}

/** Puts a new message where its mode says: the running turn (steer), the open batch (collect, steer, interrupt) or a turn of its own. */
function place(qs: Queues, state: SessionState, item: QueueItem, settings: QueueSettings, bind: BindEntries): string {
  const { running } = state;
  if (settings.mode === "steer" && running && canSteer(running, item)) {
    running.steering.push(item);
    return running.runId;
  }
  const last = state.open.at(-1);
  if (settings.mode !== "followup" && last && canJoin(last, item)) {
    last.items.push(item);
    last.lastAt = qs.now();
    return last.runId;
  }
  const batch = newBatch(qs, item.request.parsed.key, item);
  startBatch(qs, state, batch, settings, bind);
  return batch.runId;
}

/**
 * Aborts the session's running chat turn (interrupt mode) when the new message is one conversation
 * with it (same chat, same authority): a guest never stops an owner's turn, and a hook's or a
 * client's turn (not the queue's) runs on. The turns not started yet stay.
 */
function interrupt(qs: Queues, state: SessionState, item: QueueItem): void {
  const { running } = state;
  if (running && canSteer(running, item)) qs.queue.env.runs.abort(running.runId, "aborted");
}
