import type { OpenedAgentSessions } from "../sessions/agent-sessions.js";
import type { TurnStart } from "../sessions/session-lifecycle.js";
import type { TurnRequest } from "./turn-request.js";

/** A turn's start on its session, with the write that stores it (waited for before the reply goes out). */
export type StartedTurn = TurnStart & { written: Promise<void> };

/**
 * Starts the turn on its session: an isolated run (cron, hooks) gets a new sessionId; any other
 * turn continues the session or resets it (a reset trigger, an expired session).
 */
export async function beginTurn(request: TurnRequest, opened: OpenedAgentSessions): Promise<StartedTurn> {
  const { store, lifecycle } = opened;
  if (request.isolated)
    return {
      entry: await lifecycle.startIsolatedRun(store, request.parsed),
      isNew: true,
      reason: "first",
      body: request.prompt ?? "",
      greeting: false,
      policy: lifecycle.policyFor(request.parsed, undefined),
      written: Promise.resolve(),
    };
  return lifecycle.beginTurn(store, {
    parsed: request.parsed,
    ...(request.message && { message: request.message }),
    ...(request.prompt !== undefined && { text: request.prompt }),
    ...(request.reset && { reset: request.reset }),
  });
}
