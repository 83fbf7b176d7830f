import { type QueueEnv, enqueueTurn } from "../enqueue-turn.js";
import type { RunRecord } from "../run-registry.js";
import type { TurnRequest } from "../turn-request.js";
import { type Batch, type QueueItem, batchRequest, canJoin, promptOf, sameChat } from "./queue-batch.js";
import { settleNotRun } from "./queue-notices.js";
import type { QueueSettings } from "./queue-settings.js";
import { type QueueTimers, waitQuiet } from "./wait-quiet.js";

/** Ties inbox entries to the run that answers them, durably, before that run reads them. */
export type BindEntries = (entryIds: string[], runId: string) => Promise<void>;

/** One stored channel message offered to its session's queue. */
export interface QueueOffer {
  entryId: string;
  /** the turn the message alone would be (run id: the entry's; `message` set) */
  request: TurnRequest;
  bind: BindEntries;
  /** a replay of a turn its messages were tied to before a crash: exactly these messages, under that run id */
  replay?: { runId: string; followers: Array<{ entryId: string; request: TurnRequest }> };
}

/** A session's queue: its turns not started yet (in lane order) and the one running. */
interface SessionState {
  open: Batch[];
  running?: Batch;
}

/**
 * The session queues (`session.queue`, docs/config.md): which turn answers each channel message.
 * followup gives each message its own turn; collect gathers the messages that wait (and come within
 * `debounceMs` of each other) into the next turn; steer hands them to the running turn between its
 * model steps; interrupt aborts the running turn. Beyond `cap` waiting messages, `overflow` says
 * what happens. Every turn runs on the session's lane like any other.
 */
export function createSessionQueues(queue: QueueEnv, timers: QueueTimers) {
  const { env } = queue;
  const now = env.now ?? Date.now;
  const sessions = new Map<string, SessionState>();
  let arrivals = 0;

  const stateOf = (key: string): SessionState => {
    const known = sessions.get(key);
    if (known) return known;
    const state: SessionState = { open: [] };
    sessions.set(key, state);
    return state;
  };
  const forget = (key: string, state: SessionState) => {
    if (!state.running && state.open.length === 0) sessions.delete(key);
  };

  function itemOf(entryId: string, request: TurnRequest): { item: QueueItem; done: Promise<RunRecord> } {
    let settle!: (record: RunRecord) => void;
    const done = new Promise<RunRecord>((resolve) => (settle = resolve));
    return { item: { entryId, request, seq: arrivals++, settle }, done };
  }

  /** Queues a batch's turn on the lane; its messages settle with the turn's record when it ends. */
  function startBatch(state: SessionState, batch: Batch, settings: QueueSettings, bind: BindEntries): void {
    state.open.push(batch);
    const lead = batch.items[0]!.request;
    const prepare = async (signal: AbortSignal) => {
      if (batch.state !== "open") return undefined; // every message of it went elsewhere
      if (settings.mode === "collect" && !batch.sealed)
        await waitQuiet(() => batch.lastAt + settings.debounceMs - now(), timers, signal);
      batch.state = "running";
      state.open.splice(state.open.indexOf(batch), 1);
      state.running = batch;
      // One message under its own run id needs no tie: its entry's run id is the turn's already.
      if (batch.items.length > 1 && !batch.tied) await tie(batch, batch.items, bind);
      const request = batchRequest(batch);
      return settings.mode === "steer" ? { ...request, steer: () => takeSteering(batch, bind) } : request;
    };
    const { done } = enqueueTurn(queue, { ...lead, runId: batch.runId }, prepare);
    void done.then((record) => endBatch(state, batch, record, settings, bind));
  }

  /** The messages waiting to steer the running turn, tied to its run before the model reads them. */
  async function takeSteering(batch: Batch, bind: BindEntries): Promise<string[]> {
    const taken = batch.steering.splice(0);
    if (taken.length === 0) return [];
    batch.items.push(...taken);
    // The turn's first message too, when it ran alone so far: a replay finds every message of the run.
    await tie(batch, batch.tied ? taken : batch.items, bind);
    return [promptOf(taken)];
  }

  /** Ties `items` to the batch's run on disk; from then on the batch counts as tied. */
  async function tie(batch: Batch, items: QueueItem[], bind: BindEntries): Promise<void> {
    await bind(
      items.map((i) => i.entryId),
      batch.runId,
    );
    batch.tied = true;
  }

  /** A batch's turn ended: its messages settle with it; messages that came too late to steer it get the next turn. */
  function endBatch(state: SessionState, batch: Batch, record: RunRecord, settings: QueueSettings, bind: BindEntries) {
    const wasOpen = batch.state === "open";
    batch.state = "ended";
    if (wasOpen) state.open.splice(state.open.indexOf(batch), 1);
    if (state.running === batch) delete state.running;
    for (const item of batch.items) item.settle(record);
    const late = batch.steering.splice(0);
    if (late.length > 0) {
      const next = newBatch(batch.key, late[0]!);
      next.items.push(...late.slice(1));
      startBatch(state, next, settings, bind);
    }
    forget(batch.key, state);
  }

  function newBatch(key: string, item: QueueItem, sealedRunId?: string): Batch {
    const runId = sealedRunId ?? item.request.runId!;
    const sealed = !!sealedRunId;
    return { runId, key, items: [item], lastAt: now(), state: "open", sealed, tied: sealed, steering: [] };
  }

  /** Puts a new message where its mode says: the running turn (steer), the open batch (collect, steer, interrupt) or a turn of its own. */
  function place(state: SessionState, item: QueueItem, settings: QueueSettings, bind: BindEntries): string {
    const { running } = state;
    if (settings.mode === "steer" && running && canSteer(running, item)) {
      running.steering.push(item);
      return running.runId;
    }
    const last = state.open.at(-1);
    if (settings.mode !== "followup" && last && canJoin(last, item)) {
      last.items.push(item);
      last.lastAt = now();
      return last.runId;
    }
    const batch = newBatch(item.request.parsed.key, item);
    startBatch(state, batch, settings, bind);
    return batch.runId;
  }

  /**
   * Aborts the session's running chat turn (interrupt mode) when the new message is one conversation
   * with it (same chat, same authority): a guest never stops an owner's turn, and a hook's or a
   * client's turn (not the queue's) runs on. The turns not started yet stay.
   */
  function interrupt(state: SessionState, item: QueueItem): void {
    const { running } = state;
    if (running && canSteer(running, item)) env.runs.abort(running.runId, "aborted");
  }

  /** Messages waiting (not shortened), oldest first; sealed replays are not counted. */
  function waiting(state: SessionState): Array<{ item: QueueItem; list: QueueItem[] }> {
    const lists = [...state.open.filter((b) => !b.sealed).map((b) => b.items), state.running?.steering ?? []];
    return lists
      .flatMap((list) => list.filter((item) => !item.short).map((item) => ({ item, list })))
      .sort((a, b) => a.item.seq - b.item.seq);
  }

  /** Beyond the cap: refuse the new message, drop the oldest, or shorten the oldest to a line. */
  function overflow(state: SessionState, item: QueueItem, settings: QueueSettings): void {
    for (let over = waiting(state); over.length > settings.cap; over = waiting(state)) {
      const victim = settings.overflow === "refuse" ? over.find((w) => w.item === item)! : over[0]!;
      if (settings.overflow === "summarize") {
        victim.item.short = true;
        foldShortened(state, victim.list);
        continue;
      }
      victim.list.splice(victim.list.indexOf(victim.item), 1);
      void settleNotRun(env, victim.item, settings.overflow === "refuse" ? "refused" : "dropped", settings.cap);
      closeEmpty(state);
      if (victim.item === item) return;
    }
  }

  /** An open batch left with only shortened messages hands them to the next one from the same chat. */
  function foldShortened(state: SessionState, list: QueueItem[]): void {
    const batch = state.open.find((b) => b.items === list);
    if (!batch || list.some((i) => !i.short)) return;
    const next = state.open.find((b) => b !== batch && canJoin(b, list[0]!));
    if (!next) return;
    next.items.unshift(...list.splice(0));
    closeEmpty(state);
  }

  /** Open batches left empty are ended before they run (their lane task finds nothing to do). */
  function closeEmpty(state: SessionState): void {
    for (const batch of state.open.filter((b) => b.items.length === 0)) {
      batch.state = "ended";
      state.open.splice(state.open.indexOf(batch), 1);
    }
  }

  return {
    /** Messages waiting in `key`'s queue (for the next turns, shortened ones included, and to steer the running one) and the turns they make. */
    waiting(key: string): { messages: number; turns: number } {
      const state = sessions.get(key);
      if (!state) return { messages: 0, turns: 0 };
      const steering = state.running?.steering.length ?? 0;
      return { messages: state.open.reduce((n, b) => n + b.items.length, steering), turns: state.open.length };
    },

    /** `/stop`: the messages waiting to steer the running turn go with it (settled as aborted); returns how many. */
    dropSteering(key: string): number {
      const dropped = sessions.get(key)?.running?.steering.splice(0) ?? [];
      const at = now();
      for (const item of dropped)
        item.settle({ runId: item.request.runId!, sessionKey: key, status: "aborted", queuedAt: at, endedAt: at });
      return dropped.length;
    },

    /**
     * Offers a stored channel message to its session's queue; returns the run id of the turn that
     * will answer it (as things stand) and `done`, settling with that turn's record, or with an
     * aborted record when the message was not run (its sender is told why).
     */
    offer(offer: QueueOffer, settings: QueueSettings): { runId: string; done: Promise<RunRecord> } {
      const key = offer.request.parsed.key;
      const state = stateOf(key);
      const { item, done } = itemOf(offer.entryId, offer.request);
      if (offer.replay) {
        const batch = newBatch(key, item, offer.replay.runId);
        const followers = offer.replay.followers.map((f) => itemOf(f.entryId, f.request));
        batch.items.push(...followers.map((f) => f.item));
        startBatch(state, batch, settings, offer.bind);
        return { runId: batch.runId, done };
      }
      if (settings.mode === "interrupt") interrupt(state, item);
      const runId = place(state, item, settings, offer.bind);
      overflow(state, item, settings);
      return { runId, done };
    },
  };
}

/** A message may steer a running turn when it is one conversation with it (same chat, same authority, no reset). */
function canSteer(running: Batch, item: QueueItem): boolean {
  const lead = running.items[0]!.request;
  return !item.request.reset && (lead.owner ?? false) === (item.request.owner ?? false) && sameChat(lead, item.request);
}
