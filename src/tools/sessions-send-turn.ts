import { z } from "zod";
import { type TurnRunner, storedTurnRequest } from "../agents/stored-turn.js";
import { parseSessionKey } from "../routing/parse-session-key.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import { runAgentToAgentFlow } from "./agent-to-agent.js";
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

/** A stored key and the agent that owns it (the default agent for a key that names none). */
function sideOf(deps: ToolDeps, key: string): { parsed: ParsedSessionKey; agentId: string } {
  const parsed = parseSessionKey(key, deps.keys);
  if (!parsed) throw new Error(`stored sessions_send turn names "${key}", which is not a session key`);
  return { parsed, agentId: "agentId" in parsed ? parsed.agentId : deps.keys.defaultAgentId };
}

/**
 * Runs a stored `sessions_send` turn in its target session, first or replayed; settles when the
 * turn ended. Its own reply then starts the reply-back loop and the announce, in the background.
 */
export function sessionsSendRunner(deps: ToolDeps): TurnRunner {
  return {
    async run(turn, run) {
      const input = SendTurnInputSchema.parse(turn.input);
      const target = sideOf(deps, turn.sessionKey);
      const request = storedTurnRequest(turn, run, target, { extraSystemPrompt: input.extraSystemPrompt });
      const ended = await deps.runtime.enqueue(request).done;
      const reply = ended.status === "ok" ? ended.text?.trim() : undefined;
      if (!reply) return;
      const { requester } = input;
      void runAgentToAgentFlow(deps, {
        ...(requester && {
          requester: {
            parsed: sideOf(deps, requester.sessionKey).parsed,
            agentId: requester.agentId,
            ...(requester.channel && { channel: requester.channel }),
          },
        }),
        target,
        message: turn.text,
        primaryRunId: run.runId,
        primaryReply: reply,
        traceId: input.traceId,
        hop: input.hop,
        owner: turn.owner,
      }).catch((err: unknown) => deps.logger.warn({ runId: run.runId, err }, "agent-to-agent flow failed")); // best effort, logged
    },
  };
}
