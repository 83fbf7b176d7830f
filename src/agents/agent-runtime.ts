import { enqueueTurn } from "./enqueue-turn.js";
import type { RunRecord } from "./run-registry.js";
import { type QueueSettings, resolveQueueSettings, warnLegacyDebounce } from "./queue/queue-settings.js";
import { type QueueOffer, createSessionQueues } from "./queue/session-queue.js";
import { REAL_TIMERS } from "./queue/wait-quiet.js";
import type { AgentRuntimeDeps } from "./runtime-deps.js";
import { createSlotHolders } from "./slot-holders.js";
import { createSlots } from "./slots.js";
import type { TurnRequest } from "./turn-request.js";
import { createPromptFileReader } from "./workspace/prompt-files.js";

export { routeOf } from "./reply-target.js";
export { sessionModelRef } from "./session-model.js";
export type { AgentRuntimeDeps } from "./runtime-deps.js";
export type { QueueOffer } from "./queue/session-queue.js";
export type { RuntimeEvent, ToolContext, TurnRequest } from "./turn-request.js";

/**
 * Runs agent turns on sessions: one lane per session (a message that arrives during a run waits),
 * the transcript as context, token usage on the entry, and the reply through the delivery gate.
 * The steps: `enqueue-turn` (lane, slot, timeout), `run-turn` (start, prepare, model, record,
 * reply), `failed-turn`; the reply target is worked out once, in `reply-target`.
 */
export function createAgentRuntime(deps: AgentRuntimeDeps) {
  const { runs } = deps;
  const chatSlots = createSlots(deps.chatTurnsAtOnce ?? deps.config.agents.defaults.maxConcurrent);
  const holders = createSlotHolders(chatSlots);
  const queue = { env: { ...deps, readFiles: createPromptFileReader() }, holders };
  const queues = createSessionQueues(queue, deps.queueTimers ?? REAL_TIMERS);
  warnLegacyDebounce(deps.config, deps.logger);
  return {
    /** Queues a turn on the session's lane and returns at once; `done` settles with the run's record when it ends (never rejects). */
    enqueue: (request: TurnRequest): { runId: string; done: Promise<RunRecord> } => enqueueTurn(queue, request),

    /**
     * Offers a stored channel message to its session's queue (`session.queue`, the session's
     * `/queue` mode first): `done` settles with the record of the turn that answered it, or an
     * aborted one when it was not run.
     */
    async offer(offer: QueueOffer): Promise<{ runId: string; done: Promise<RunRecord> }> {
      return queues.offer(offer, await queueSettingsOf(deps, offer.request));
    },

    /** Messages waiting in the session's queue (session.queue) and the queued turns they make, for `/status`. */
    waiting: (sessionKey: string): { messages: number; turns: number } => queues.waiting(sessionKey),

    /** Runs `wait` with run `runId`'s chat slot given back meanwhile (see {@link createSlotHolders}). */
    waitOutsideSlot: <T>(runId: string, wait: () => Promise<T>): Promise<T> => holders.waitOutside(runId, wait),

    /** Aborts the session's running turn and clears its queue; returns the aborted run ids. */
    abortSession(sessionKey: string): { runIds: string[]; cleared: number } {
      const active = runs.active(sessionKey);
      const cleared = deps.lanes.clear(sessionKey) + queues.dropSteering(sessionKey);
      for (const run of active) runs.abort(run.runId, "aborted");
      return { runIds: active.map((run) => run.runId), cleared };
    },

    /** The chat-turn slots: held and waited for (metrics). */
    chatSlots: () => chatSlots,
  };
}

/** The queue settings for a message's session: `session.queue`, with the session's `/queue` mode first. */
async function queueSettingsOf(deps: AgentRuntimeDeps, request: TurnRequest): Promise<QueueSettings> {
  const { store } = await deps.sessions.forAgent(request.agentId);
  return resolveQueueSettings(deps.config, {
    agentId: request.agentId,
    channel: request.message?.channel,
    accountId: request.message?.accountId,
    entry: store.get(request.parsed.key),
  });
}

/** The agent runtime. */
export type AgentRuntime = ReturnType<typeof createAgentRuntime>;
