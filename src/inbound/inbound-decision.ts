import type { CommandOutcome } from "../commands/command-context.js";
import { STRINGS } from "../commands/command-strings.js";
import type { SessionReset } from "../sessions/session-lifecycle.js";
import type { AccessDecision } from "./access.js";

/** What the pipeline learned about a routed message before deciding: who sent it and what its command did. */
export interface InboundFacts {
  access: AccessDecision;
  /**
   * What the command dispatcher made of the message: null when it is not a command; undefined when
   * commands were not asked (a stranger, or a replayed command that had already run).
   */
  outcome?: CommandOutcome | null | undefined;
  /** a replayed message whose command had already run (its lines are in the history) */
  alreadyRan?: boolean;
  /** the name of a native command the platform offered but the core does not know (a stale command menu) */
  unknownNative?: string | undefined;
}

/** The one thing that becomes of a routed message. */
export type InboundDecision =
  /** nothing runs; `refused`: the sender may not talk here (logged), else the group wanted a mention; `pairing`: a stranger who may get a code */
  | { kind: "ignore"; reason: string; refused: boolean; pairing?: true }
  /** a command's outcome to answer; `record`: keep it in the session's history and show it to its clients */
  | { kind: "answer"; outcome: CommandOutcome; record: boolean }
  /** a turn on the session's lane, on a new session first when `reset` says so */
  | { kind: "turn"; reset?: SessionReset };

/** A refused sender's message: ignored with the access check's reason. */
function refuse(access: AccessDecision): InboundDecision {
  return {
    kind: "ignore",
    reason: access.reason ?? "not-allowed",
    refused: true,
    ...(access.pairing && { pairing: true as const }),
  };
}

/**
 * Decides what becomes of a routed message (docs/architecture.md, "Inbound: decide, act, finish").
 * Pure: the same facts always give the same decision. Order matters: a stranger reaches nothing;
 * a command answers; running commands does not imply talking; a group may want a mention, except
 * for a reset addressed to the bot.
 */
export function decide(facts: InboundFacts): InboundDecision {
  const { access, outcome } = facts;
  if (!access.allowed && !access.commands) return refuse(access);
  if (facts.alreadyRan) return { kind: "answer", outcome: {}, record: false };
  if (outcome && !outcome.reset) return { kind: "answer", outcome, record: outcome.refused !== true };
  if (!outcome && facts.unknownNative !== undefined)
    return {
      kind: "answer",
      outcome: { reply: STRINGS.unknownCommand(facts.unknownNative), ephemeral: true },
      record: false,
    };
  if (!access.allowed) return refuse(access);
  if (access.needsMention && !outcome?.reset) return { kind: "ignore", reason: "not-mentioned", refused: false };
  return { kind: "turn", ...(outcome?.reset && { reset: outcome.reset }) };
}
