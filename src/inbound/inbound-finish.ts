import { INTERACTION_ANSWERS, type InteractionAnswer, commandAnswer } from "../commands/interaction-answers.js";
import type { CommandInteraction } from "../delivery/channel-adapter.js";
import type { Logger } from "../logger.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import type { Inbox, PendingInbound } from "./inbox.js";
import type { InboundDecision } from "./inbound-decision.js";

/** Dependencies of {@link createFinish}. */
export interface FinishDeps {
  inbox: Pick<Inbox, "complete">;
  logger: Logger;
}

/** A stored message being finished: its entry, the message, and the interaction to answer, if any. */
export interface Finishing {
  entry: PendingInbound;
  message?: InboundMessage | undefined;
  interaction?: CommandInteraction | undefined;
}

/** The interaction's answer for a decision (wording in `commands/interaction-answers.ts`). */
function answerOf(decision: InboundDecision): InteractionAnswer {
  if (decision.kind === "answer") return commandAnswer(decision.outcome);
  if (decision.kind === "turn") return INTERACTION_ANSWERS.turn;
  return decision.refused ? INTERACTION_ANSWERS.refused : INTERACTION_ANSWERS.notMentioned;
}

/** Answers the interaction, if there is one; a failing platform is logged, never thrown. */
async function answer(logger: Logger, { message, interaction }: Finishing, reply: InteractionAnswer): Promise<void> {
  if (!interaction) return;
  try {
    await interaction.reply(reply.text, { ephemeral: reply.ephemeral });
  } catch (err) {
    const fields = { channel: message?.channel, chatId: message?.chat.id, command: message?.command?.name };
    logger.error({ ...fields, err }, "native command answer failed");
  }
}

/** Marks the entry done; a failure to record it only risks a replay, which the outbox dedupes. */
async function markDone(deps: FinishDeps, entry: PendingInbound): Promise<void> {
  await deps.inbox
    .complete(entry.id)
    .catch((err: unknown) =>
      deps.logger.error({ id: entry.id, err }, "inbox entry not marked done; it will be replayed"),
    );
}

/**
 * The inbound pipeline's one exit: the only place that marks an inbox entry done and the only place
 * that answers a platform interaction.
 */
export function createFinish(deps: FinishDeps) {
  return {
    /**
     * Answers the interaction for the decision and marks the entry done. A turn's entry is done when
     * its run (`turn`) settles, its reply in the outbox by then: the returned `done` settles after that.
     */
    async decided<T>(
      finishing: Finishing,
      decision: InboundDecision,
      turn?: Promise<T>,
    ): Promise<{ done?: Promise<T> }> {
      await answer(deps.logger, finishing, answerOf(decision));
      if (!turn) return markDone(deps, finishing.entry).then(() => ({}));
      return { done: turn.then((record) => markDone(deps, finishing.entry).then(() => record)) };
    },

    /** A message whose handling threw: its sender is told through the interaction, and the entry is not retried forever. */
    async failed(finishing: Finishing): Promise<void> {
      await answer(deps.logger, finishing, INTERACTION_ANSWERS.failed);
      await markDone(deps, finishing.entry);
    },

    /** An entry that is done without being handled (unreadable, already answered, not replayable). */
    dropped: (entry: PendingInbound): Promise<void> => markDone(deps, entry),
  };
}
