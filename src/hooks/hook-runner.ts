import { z } from "zod";
import type { TurnRunner } from "../agents/stored-turn.js";
import { type AutomationDeps, runAnnouncedTurn } from "../cron/run-announced-turn.js";

/** What a stored hook turn keeps besides its session, text and authority. */
const HookTurnInputSchema = z.object({
  /** a new `hook:<uuid>` session gets a new sessionId for its run */
  isolated: z.boolean(),
  model: z.string().optional(),
  timeoutMs: z.number().int().positive().optional(),
  /** `last`, a target such as `telegram:123`, or none (the reply stays internal) */
  announceTo: z.string().optional(),
});

/** A stored hook turn's input, as a request gives it (fields left undefined are not stored). */
export type HookTurnInput = z.input<typeof HookTurnInputSchema>;

type HookOutcome = Awaited<ReturnType<typeof runAnnouncedTurn>>;

/** Logs how a hook turn ended. */
function logHookTurn(deps: AutomationDeps, runId: string, sessionKey: string, outcome: HookOutcome): void {
  const fields = {
    runId,
    sessionKey,
    status: outcome.status,
    delivery: outcome.delivery,
    // the text the run recorded; an exception behind it was logged with its stack where it was caught
    ...(outcome.error && { error: outcome.error }),
  };
  if (outcome.status === "ok") deps.logger.info(fields, "hook turn finished");
  else deps.logger.warn(fields, "hook turn failed");
}

/**
 * Runs a stored webhook turn (`/agent`, `/wake`), first or replayed: the turn with its reply kept
 * internal, then the announce through the delivery gate; settles once the announce is in the outbox.
 */
export function hookTurnRunner(deps: AutomationDeps): TurnRunner {
  return {
    async run(turn, run) {
      const input = HookTurnInputSchema.parse(turn.input);
      const { parsed, agentId } = deps.parseKey(turn.sessionKey);
      const outcome = await runAnnouncedTurn(deps, {
        runId: run.runId,
        parsed,
        agentId,
        prompt: turn.text,
        isolated: input.isolated,
        model: input.model,
        timeoutMs: input.timeoutMs,
        announceTo: input.announceTo,
        provenance: turn.provenance,
        owner: turn.owner,
        resumed: run.resumed,
        onStart: run.onStart,
      });
      logHookTurn(deps, run.runId, turn.sessionKey, outcome);
    },
  };
}
