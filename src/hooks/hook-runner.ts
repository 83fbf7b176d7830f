import type { z } from "zod";
import type { TurnRunner } from "../agents/stored-turn.js";
import {
  AnnouncedTurnInputSchema,
  type AutomationDeps,
  type runAnnouncedTurn,
  runStoredAnnouncedTurn,
} from "../cron/run-announced-turn.js";

/** A stored hook turn's input, as a request gives it (fields left undefined are not stored). */
export type HookTurnInput = z.input<typeof AnnouncedTurnInputSchema>;

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
      const outcome = await runStoredAnnouncedTurn(deps, turn, run, AnnouncedTurnInputSchema.parse(turn.input));
      logHookTurn(deps, run.runId, turn.sessionKey, outcome);
    },
  };
}
