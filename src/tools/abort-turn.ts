// A stop of a sub-agent's run as a stored turn (docs/scale-out.md "The way there", step 5): `/stop`
// (and `/subagents stop`, `subagents.stop`) writes the stop on the child's record, then stores an
// `abort` turn in the CHILD's inbox under `abort:<childRunId>`; its runner, the child session's
// owner, aborts the child's run there. A restart before it ran replays it; a run that ended meanwhile
// is left as it ended.
import { z } from "zod";
import type { AgentRuntime } from "../agents/agent-runtime.js";
import type { StartTurn, StoredTurn, TurnRunner } from "../agents/stored-turn.js";
import { storedRunId } from "../agents/uuid-v5.js";
import type { SubagentRecord } from "./subagent-record.js";

/** The dedupe key of the stop of a sub-agent's run: a second `/stop` of one run stores nothing. */
const abortDedupeKey = (childRunId: string): string => `abort:${childRunId}`;

/** What a stored abort keeps: the run it stops. */
const AbortTurnInputSchema = z.object({ runId: z.string().min(1) });

/** Stores the stop of `record`'s run in its child's inbox, with a run id every gateway derives alike from schema `scope`. */
export async function storeAbort(turns: { start: StartTurn }, scope: string, record: SubagentRecord): Promise<void> {
  const turn: StoredTurn = {
    source: "abort",
    sessionKey: record.childSessionKey,
    text: `Stop sub-agent run ${record.runId}`,
    owner: false,
    provenance: { kind: "system" },
    input: { runId: record.runId },
  };
  const dedupeKey = abortDedupeKey(record.runId);
  await turns.start(turn, { dedupeKey, runId: storedRunId("abort", scope, dedupeKey) });
}

/** What running a stored abort needs: the sub-agents' records and the runtime of this (the child's) owner. */
export interface AbortTurnDeps {
  subagents: { get(runId: string): SubagentRecord | undefined };
  runtime: Pick<AgentRuntime, "abortSession">;
}

/**
 * Runs a stored abort in the child's session, first or replayed: aborts the child's running turn and
 * clears its lane, as `/stop` does in a session. Nothing when the run is no longer running (it ended,
 * or a restart's recovery recorded it stopped). Synchronous: on the gateway that stored it, the
 * run's abort is signalled by the time the store settled.
 */
export function abortTurnRunner(deps: AbortTurnDeps): TurnRunner {
  return {
    async run(turn) {
      const { runId } = AbortTurnInputSchema.parse(turn.input);
      const record = deps.subagents.get(runId);
      if (record?.state !== "running") return;
      deps.runtime.abortSession(record.childSessionKey);
    },
  };
}
