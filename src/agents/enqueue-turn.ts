import { randomUUID } from "node:crypto";
import { failTurn } from "./failed-turn.js";
import { replyTargetOf } from "./reply-target.js";
import type { RunRecord } from "./run-registry.js";
import { runTurn } from "./run-turn.js";
import type { TurnEnv } from "./runtime-deps.js";
import type { createSlotHolders } from "./slot-holders.js";
import type { Turn } from "./turn.js";
import type { TurnRequest } from "./turn-request.js";
import { type TurnSignal, turnSignal } from "./turn-signal.js";

/** The longest wait a timer takes: `done` of a repeated run id waits for the first one this long. */
const FOREVER_MS = 2 ** 31 - 1;

/** What queuing a turn uses: the turn steps' environment and the chat slots running chat turns hold. */
export interface QueueEnv {
  env: TurnEnv;
  holders: ReturnType<typeof createSlotHolders>;
}

/**
 * Run at the head of the lane, before the chat slot: the request the turn runs (a session queue
 * gathers its messages and ties them to the run here), or undefined when nothing is left to run.
 */
export type PrepareTurn = (signal: AbortSignal) => Promise<TurnRequest | undefined>;

/** Runs a queued turn on its lane: a chat slot first (for channel messages), then the turn; ends it as failed on any error. */
async function runQueued({ env, holders }: QueueEnv, queued: Turn, timeoutMs: number, prepare?: PrepareTurn) {
  const abortSignal = queued.signal;
  let turn = queued;
  let release: (() => void) | undefined;
  let running: TurnSignal | undefined;
  try {
    if (prepare) {
      const request = await prepare(abortSignal);
      if (!request) return env.runs.finish(turn.runId, { status: "aborted", error: "nothing left to run" });
      turn = { ...turn, request };
    }
    // A /stop while the turn waits for a slot ends the wait (rejected: ended as aborted below).
    if (turn.request.message) release = await holders.take(turn.runId, abortSignal);
    abortSignal.throwIfAborted();
    await turn.request.onStart?.();
    running = turnSignal(abortSignal, timeoutMs);
    const result = await runTurn(env, { ...turn, signal: running.signal });
    env.runs.finish(turn.runId, { status: "ok", text: result.text });
    env.onEvent?.({ type: "chat", sessionKey: turn.request.parsed.key, runId: turn.runId, state: "final" });
  } catch (err) {
    await failTurn(env, turn, err, abortSignal.aborted ? "aborted" : running?.timedOut() ? "timeout" : "error");
  } finally {
    running?.dispose();
    release?.();
  }
}

/**
 * Queues a turn on the session's lane and returns at once; `done` settles with the run's record
 * when it ends (never rejects). A run id already known is not run again: `done` waits for that run.
 * With `prepare`, the request is worked out at the head of the lane (see {@link PrepareTurn}).
 */
export function enqueueTurn(
  queue: QueueEnv,
  request: TurnRequest,
  prepare?: PrepareTurn,
): { runId: string; done: Promise<RunRecord> } {
  const { env } = queue;
  const runId = request.runId ?? randomUUID();
  const existing = env.runs.get(runId);
  if (existing) return { runId, done: env.runs.wait(runId, FOREVER_MS).then((r) => r ?? existing) };
  const { signal } = env.runs.create(runId, request.parsed.key);
  const turn: Turn = { request, runId, target: replyTargetOf(request), signal };
  const timeoutMs = request.timeoutMs ?? env.config.models.timeoutSeconds * 1000;
  const done = env.lanes
    .run(request.parsed.key, () => runQueued(queue, turn, timeoutMs, prepare))
    // Rejected before it ran: aborted while queued, or the lane was cleared by /stop.
    .catch((err) => failTurn(env, turn, err, "aborted"))
    .then(() => env.runs.get(runId)!);
  return { runId, done };
}
