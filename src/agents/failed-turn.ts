import { failureKey } from "./run-delivery-keys.js";
import { chatErrorText, logError } from "../errors.js";
import { asModelError } from "./models/model-error.js";
import type { RunEnd } from "./run-end.js";
import type { TurnEnv } from "./runtime-deps.js";
import type { Turn } from "./turn.js";
import { sendNotice } from "./turn-notices.js";

/** How a turn failed: an abort (/stop), a timeout, or an error. */
export type TurnFailure = Exclude<RunEnd, "ok">;

/** What people may read about the failure; the chat edge logs the error (with an error id when it is unexpected). */
function failureText(env: TurnEnv, turn: Turn, err: unknown, status: TurnFailure): string {
  const fields = { sessionKey: turn.request.parsed.key, runId: turn.runId };
  if (status === "timeout") logError(env.logger, err, "agent run timed out", fields);
  return status === "error" ? chatErrorText(asModelError(err), env.logger, "agent run failed", fields) : status;
}

/** An aborted turn marks its session (`abortedLastRun`), best effort: the entry may have been deleted meanwhile. */
async function markAborted(env: TurnEnv, turn: Turn): Promise<void> {
  const { store } = await env.sessions.forAgent(turn.request.agentId);
  await store
    .patch(turn.request.parsed.key, (current) => (current ? { abortedLastRun: true } : undefined))
    .catch(() => undefined);
}

/**
 * Ends a failed turn: a timeout or an error is told to the turn's chat as a notice (every chat,
 * the web and terminal chat included), then the run ends with what went wrong; an abort only ends it.
 */
export async function failTurn(env: TurnEnv, turn: Turn, err: unknown, status: TurnFailure): Promise<void> {
  const message = failureText(env, turn, err, status);
  const { request, runId, target } = turn;
  if (status !== "aborted" && target) {
    const text = status === "timeout" ? "⚠️ The agent took too long and was stopped." : `⚠️ The agent failed: ${message}`;
    await sendNotice(env.deliver, { sessionKey: request.parsed, target, text, idempotencyKey: failureKey(runId) });
  }
  env.runs.finish(runId, { status, error: message });
  const state = status === "aborted" ? "aborted" : "error";
  env.onEvent?.({ type: "chat", sessionKey: request.parsed.key, runId, state, error: message });
  if (status === "aborted") await markAborted(env, turn);
}
