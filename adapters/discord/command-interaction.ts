import { type ChatInputCommandInteraction, MessageFlags } from "discord.js";
import type { CommandInteraction, Logger } from "../../src/index.js";
import { DiscordCodes, describeDiscordError, discordCodeOf } from "./discord-errors.js";
import { type MessageLimits, splitMessage } from "./split-text.js";

/** What {@link createCommandInteraction} needs. */
export interface InteractionDeps {
  accountId: string;
  logger: Logger;
  limits: MessageLimits;
}

/** The core's {@link CommandInteraction} over a discord.js slash command, plus the adapter's own first step. */
export interface DiscordCommandInteraction extends CommandInteraction {
  /** Defers ephemerally at once: Discord drops an interaction not acknowledged within 3 s. */
  acknowledge(): Promise<void>;
}

// Answers never ping: model output may contain @everyone or a role mention.
const NO_PINGS = { parse: [] };

/**
 * Answers one slash command. The adapter acknowledges it as soon as it arrives (an ephemeral
 * "thinking…", so a refusal never shows in the channel); the answer then replaces it when it is
 * ephemeral too, or, when it is public, the placeholder is deleted and the answer posted as a
 * follow-up everyone sees. A long answer goes out as follow-ups of at most one message each. An
 * expired interaction (Discord 10062: the token lived 15 minutes, or the acknowledgement came too
 * late) is logged and never retried; other failures are logged too: the interaction is the last
 * edge of a command.
 */
export function createCommandInteraction(
  interaction: ChatInputCommandInteraction,
  deps: InteractionDeps,
): DiscordCommandInteraction {
  const { logger, accountId } = deps;
  let acknowledged: Promise<{ ephemeral: boolean } | undefined> | undefined;
  const context = { accountId, interactionId: interaction.id, command: interaction.commandName };

  const failed = (err: unknown, step: string) => logFailure(logger, { ...context, step }, err);

  function defer(ephemeral: boolean): Promise<{ ephemeral: boolean } | undefined> {
    acknowledged ??= interaction
      .deferReply(ephemeral ? { flags: MessageFlags.Ephemeral } : {})
      .then(() => ({ ephemeral }))
      .catch((err: unknown) => failed(err, "defer"));
    return acknowledged;
  }

  return {
    acknowledge: async () => void (await defer(true)),
    defer: async (options) => void (await defer(options?.ephemeral ?? false)),
    async reply(text, options) {
      const ephemeral = options?.ephemeral ?? false;
      const [first = "(no answer)", ...rest] = splitMessage(text, deps.limits);
      try {
        if (!acknowledged) {
          acknowledged = Promise.resolve({ ephemeral });
          return await answer(interaction, undefined, [first, ...rest], ephemeral);
        }
        const state = await acknowledged;
        // Without a state the acknowledgement failed and was logged: the token is unusable.
        if (state) await answer(interaction, state, [first, ...rest], ephemeral);
      } catch (err) {
        failed(err, "reply");
      }
    },
  };
}

/** Logs a failed step: an expired interaction (never retried) or any other failure. */
function logFailure(logger: Logger, context: Record<string, string>, err: unknown): undefined {
  if (discordCodeOf(err) === DiscordCodes.UNKNOWN_INTERACTION)
    logger.warn(context, "discord interaction expired before it was answered; not retried");
  else logger.warn({ ...context, err: describeDiscordError(err) }, "discord interaction answer failed");
  return undefined;
}

/** Posts each piece as a follow-up message. */
async function followUps(
  interaction: ChatInputCommandInteraction,
  pieces: readonly string[],
  ephemeral: boolean,
): Promise<void> {
  for (const content of pieces)
    await interaction.followUp({
      content,
      allowedMentions: NO_PINGS,
      ...(ephemeral && { flags: MessageFlags.Ephemeral }),
    });
}

/**
 * The answer, in pieces: as the interaction's reply when nothing acknowledged it yet (`state`
 * undefined), in place of the placeholder when its visibility matches, else (the placeholder's
 * visibility cannot change) the placeholder removed and every piece a follow-up.
 */
async function answer(
  interaction: ChatInputCommandInteraction,
  state: { ephemeral: boolean } | undefined,
  [first, ...rest]: readonly string[],
  ephemeral: boolean,
): Promise<void> {
  if (!state) {
    await interaction.reply({
      content: first,
      allowedMentions: NO_PINGS,
      ...(ephemeral && { flags: MessageFlags.Ephemeral }),
    });
    return followUps(interaction, rest, ephemeral);
  }
  if (state.ephemeral === ephemeral) {
    await interaction.editReply({ content: first, allowedMentions: NO_PINGS });
    return followUps(interaction, rest, ephemeral);
  }
  await interaction.deleteReply();
  await followUps(interaction, [first!, ...rest], ephemeral);
}
