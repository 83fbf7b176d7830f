import type { CommandOutcome } from "./command-context.js";
import { STRINGS } from "./command-strings.js";

/** What a native command's interaction is answered: the text and whether the sender alone sees it. */
export interface InteractionAnswer {
  text: string;
  ephemeral: boolean;
}

/**
 * How a platform interaction (a native slash command) is answered when the message ran no command
 * of its own, by what became of it: the sender may not use commands, the group wants a mention,
 * a turn started (its answer follows in the chat), or handling it failed. Silence would leave the
 * platform's command spinning, so every ending has a row.
 */
export const INTERACTION_ANSWERS = {
  refused: { text: STRINGS.refusedCommands, ephemeral: true },
  notMentioned: { text: STRINGS.nativeDone, ephemeral: true },
  turn: { text: STRINGS.nativeTurn, ephemeral: true },
  failed: { text: STRINGS.nativeFailed, ephemeral: true },
} as const satisfies Record<string, InteractionAnswer>;

/**
 * A command's outcome as its interaction's answer: its reply, else "Done." (an interaction wants
 * an answer even when the command says nothing); refusals, private replies and silent commands
 * reach the sender alone.
 */
export function commandAnswer(outcome: CommandOutcome): InteractionAnswer {
  return {
    text: outcome.reply ?? STRINGS.nativeDone,
    ephemeral: outcome.refused === true || outcome.ephemeral === true || outcome.reply === undefined,
  };
}
