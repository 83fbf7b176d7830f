import { z } from "zod";
import type { AgentRuntime } from "../agents/agent-runtime.js";
import { type TurnRunner, storedTurnRequest } from "../agents/stored-turn.js";
import { DeliveryContextSchema } from "../sessions/session-entry.js";
import type { CoreKeys } from "./core-keys.js";

/** What a stored `agent` call keeps besides its session, text and authority. */
const ClientTurnInputSchema = z.object({
  /** the session's last route when the call asked `deliver`; absent keeps the reply internal */
  deliver: DeliveryContextSchema.optional(),
  timeoutMs: z.number().int().positive().optional(),
  extraSystemPrompt: z.string().optional(),
});

/** Runs a gateway client's stored `agent` turn, first or replayed; settles when the run ended (its reply, if delivered, in the outbox). */
export function clientTurnRunner(deps: { runtime: Pick<AgentRuntime, "enqueue">; keys: Pick<CoreKeys, "parseKey"> }) {
  const runner: TurnRunner = {
    async run(turn, run) {
      const input = ClientTurnInputSchema.parse(turn.input);
      const session = deps.keys.parseKey(turn.sessionKey);
      await deps.runtime.enqueue(storedTurnRequest(turn, run, session, input)).done;
    },
  };
  return runner;
}
