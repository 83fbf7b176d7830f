import { z } from "zod";
import { type TurnRunner, storedTurnRequest } from "../agents/stored-turn.js";
import { continueFlow, nextStepStored, sideOf } from "./agent-to-agent.js";
import type { ToolDeps } from "./tool-deps.js";

/** What a stored `sessions_send` turn keeps: the agent-to-agent context, and what the reply-back flow after it needs. */
const SendTurnInputSchema = z.object({
  extraSystemPrompt: z.string(),
  /** the requesting session (absent: the gateway owner, who gets no reply-back steps) */
  requester: z.object({ sessionKey: z.string(), agentId: z.string(), channel: z.string().optional() }).optional(),
  traceId: z.string(),
  hop: z.number().int().min(0),
});
/** A stored `sessions_send` turn's input. */
export type SendTurnInput = z.infer<typeof SendTurnInputSchema>;

/**
 * Runs a stored `sessions_send` turn in its target session, first or replayed; settles once the
 * turn ended and the first step of the agent-to-agent flow after it (`agent-to-agent.ts`) is stored.
 */
export function sessionsSendRunner(deps: ToolDeps): TurnRunner {
  return {
    async run(turn, run) {
      const input = SendTurnInputSchema.parse(turn.input);
      // Replayed after the crash came after step 1 (or the announce) was stored: the turn ran; not again.
      if (run.resumed && nextStepStored(deps, run.runId, 0)) return;
      const target = sideOf(deps, turn.sessionKey);
      const request = storedTurnRequest(turn, run, target, { extraSystemPrompt: input.extraSystemPrompt });
      const ended = await deps.runtime.enqueue(request).done;
      const reply = ended.status === "ok" ? ended.text?.trim() : undefined;
      if (!reply) return;
      const { requester } = input;
      const flow = {
        ...(requester && { requester }),
        target: { sessionKey: target.parsed.key, agentId: target.agentId },
        message: turn.text,
        primaryRunId: run.runId,
        primaryReply: reply,
        traceId: input.traceId,
      };
      // The first step of the reply-back flow is stored before this turn is done: a crash resumes the flow.
      await continueFlow(deps, flow, { turn: 1, hop: input.hop, latest: reply, ended: false }, turn.owner);
    },
  };
}
