import { randomUUID } from "node:crypto";
import { failTurn } from "./failed-turn.js";
import type { RunRecord } from "./run-registry.js";
import { replyTargetOf } from "./reply-target.js";
import { runTurn } from "./run-turn.js";
import { type AgentRuntimeDeps, CHAT_TURNS_AT_ONCE, type TurnEnv } from "./runtime-deps.js";
import { createSlotHolders } from "./slot-holders.js";
import { createSlots } from "./slots.js";
import type { Turn } from "./turn.js";
import type { TurnRequest } from "./turn-request.js";
import { createPromptFileReader } from "./workspace/prompt-files.js";

export { routeOf } from "./reply-target.js";
export { sessionModelRef } from "./session-model.js";
export type { AgentRuntimeDeps } from "./runtime-deps.js";
export type { RuntimeEvent, ToolContext, TurnRequest } from "./turn-request.js";

/** The longest wait a timer takes: `done` of a repeated run id waits for the first one this long. */
const FOREVER_MS = 2 ** 31 - 1;

/**
 * Runs agent turns on sessions: one lane per session (a message that arrives during a run waits),
 * the transcript as context, token usage on the entry, and the reply through the delivery gate
 * (the steps: {@link runTurn}, {@link failTurn}; the reply target: {@link replyTargetOf}).
 */
export function createAgentRuntime(deps: AgentRuntimeDeps) {
  const { config, runs } = deps;
  const env: TurnEnv = { ...deps, readFiles: createPromptFileReader() };
  const chatSlots = createSlots(deps.chatTurnsAtOnce ?? CHAT_TURNS_AT_ONCE);
  const holders = createSlotHolders(chatSlots);

  /** Runs a queued turn on its lane: a chat slot first (for channel messages), then the turn; ends it as failed on any error. */
  async function runQueued(turn: Turn, abortSignal: AbortSignal, timeoutMs: number): Promise<void> {
    // A /stop while the turn waits for a slot ends the wait (rejected: ended as aborted by the caller).
    const release = turn.request.message ? await holders.take(turn.runId, abortSignal) : undefined;
    let timeout: AbortSignal | undefined;
    try {
      abortSignal.throwIfAborted();
      await turn.request.onStart?.();
      timeout = AbortSignal.timeout(timeoutMs);
      const result = await runTurn(env, { ...turn, signal: AbortSignal.any([abortSignal, timeout]) });
      runs.finish(turn.runId, { status: "ok", text: result.text });
      deps.onEvent?.({ type: "chat", sessionKey: turn.request.parsed.key, runId: turn.runId, state: "final" });
    } catch (err) {
      await failTurn(env, turn, err, abortSignal.aborted ? "aborted" : timeout?.aborted ? "timeout" : "error");
    } finally {
      release?.();
    }
  }

  return {
    /**
     * Queues a turn on the session's lane and returns at once; `done` settles with the run's
     * record when it ends (never rejects).
     */
    enqueue(request: TurnRequest): { runId: string; done: Promise<RunRecord> } {
      const runId = request.runId ?? randomUUID();
      const existing = runs.get(runId);
      if (existing) return { runId, done: runs.wait(runId, FOREVER_MS).then((r) => r ?? existing) };
      const { signal } = runs.create(runId, request.parsed.key);
      const turn: Turn = { request, runId, target: replyTargetOf(request), signal };
      const timeoutMs = request.timeoutMs ?? config.models.timeoutSeconds * 1000;
      const done = deps.lanes
        .run(request.parsed.key, () => runQueued(turn, signal, timeoutMs))
        // Rejected before it ran: aborted while queued, or the lane was cleared by /stop.
        .catch((err) => failTurn(env, turn, err, "aborted"))
        .then(() => runs.get(runId)!);
      return { runId, done };
    },

    /** Runs `wait` with run `runId`'s chat slot given back meanwhile (see {@link createSlotHolders}). */
    waitOutsideSlot: <T>(runId: string, wait: () => Promise<T>): Promise<T> => holders.waitOutside(runId, wait),

    /** Aborts the session's running turn and clears its queue; returns the aborted run ids. */
    abortSession(sessionKey: string): { runIds: string[]; cleared: number } {
      const active = runs.active(sessionKey);
      const cleared = deps.lanes.clear(sessionKey);
      for (const run of active) runs.abort(run.runId, "aborted");
      return { runIds: active.map((run) => run.runId), cleared };
    },

    /** The chat-turn slots: held and waited for (metrics). */
    chatSlots: () => chatSlots,
  };
}

/** The agent runtime. */
export type AgentRuntime = ReturnType<typeof createAgentRuntime>;
