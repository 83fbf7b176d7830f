/**
 * How a run ended, in one word everywhere in the core: the run registry, turn failures, cron runs,
 * sub-agents and `/subagents`. `aborted` is a stop asked for (`/stop`, `sessions.abort`, a cascade).
 */
export const RUN_ENDS = ["ok", "error", "timeout", "aborted"] as const;
/** One of {@link RUN_ENDS}. */
export type RunEnd = (typeof RUN_ENDS)[number];

/**
 * The words the sub-agent registry stores in `state/subagents.json` and announces ("Status:
 * success"); that file and the announce text keep them, so they are mapped here and nowhere else.
 */
export const SUBAGENT_OUTCOME_OF = {
  ok: "success",
  error: "error",
  timeout: "timeout",
  aborted: "stopped",
} as const satisfies Record<RunEnd, string>;
/** A run end as the sub-agent registry writes it. */
export type SubagentOutcome = (typeof SUBAGENT_OUTCOME_OF)[RunEnd];
/** The stored sub-agent outcomes, for the registry's record schema. */
export const SUBAGENT_OUTCOMES = Object.values(SUBAGENT_OUTCOME_OF) as [SubagentOutcome, ...SubagentOutcome[]];

/** The run end a stored sub-agent outcome stands for. */
export function runEndOfSubagentOutcome(outcome: SubagentOutcome): RunEnd {
  return RUN_ENDS.find((end) => SUBAGENT_OUTCOME_OF[end] === outcome) ?? "error";
}
