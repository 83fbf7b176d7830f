import { ApplicationCommandOptionType, type Client, type RESTPutAPIApplicationCommandsJSONBody } from "discord.js";
import type { Logger } from "../../src/index.js";
import { describeDiscordError } from "./discord-errors.js";

/** A command the core understands, as the command table describes it. */
export interface NativeCommand {
  name: string;
  summary: string;
}

/** The option every slash command carries: the rest of the command as typed (`/send` `input: off`). */
export const INPUT_OPTION = "input";

const NAME = /^[-_\p{Ll}\p{N}]{1,32}$/u;
const MAX_DESCRIPTION = 100;

/**
 * The application commands for a bulk overwrite: one per command of the table, each with one
 * optional string option `input` (the arguments as typed). Discord allows lowercase names of
 * 1-32 characters and descriptions of 1-100; other names are left out, long summaries cut.
 */
function toSlashCommands(commands: readonly NativeCommand[]): RESTPutAPIApplicationCommandsJSONBody {
  return commands
    .filter((command) => NAME.test(command.name))
    .slice(0, 100)
    .map((command) => {
      const summary = command.summary.trim() || `/${command.name}`;
      return {
        name: command.name,
        description: summary.length > MAX_DESCRIPTION ? `${summary.slice(0, MAX_DESCRIPTION - 1)}…` : summary,
        options: [
          {
            type: ApplicationCommandOptionType.String,
            name: INPUT_OPTION,
            description: "arguments, as you would type them after the command",
            required: false,
          },
        ],
      };
    });
}

/** What {@link registerSlashCommands} needs. */
export interface RegisterOptions {
  accountId: string;
  /** false: the list is cleared (an empty overwrite), so no stale commands stay in Discord's menu */
  enabled: boolean;
  /** register per guild instead of globally (guild commands appear at once) */
  guildIds?: readonly string[];
  logger: Logger;
}

/**
 * Overwrites the bot's slash commands in one call (`PUT /applications/<id>/commands`, or per guild).
 * A failure is logged: typed commands work without the menu.
 */
export async function registerSlashCommands(
  client: Client<true>,
  commands: readonly NativeCommand[],
  options: RegisterOptions,
): Promise<void> {
  const body = options.enabled ? toSlashCommands(commands) : [];
  const { accountId, logger } = options;
  try {
    if (options.guildIds?.length) {
      for (const guildId of options.guildIds) await client.application.commands.set(body, guildId);
    } else {
      await client.application.commands.set(body);
    }
    logger.info(
      { accountId, commands: body.length, scope: options.guildIds?.length ? options.guildIds : "global" },
      "discord slash commands registered",
    );
  } catch (err) {
    // A missing menu is cosmetic: typed commands keep working.
    logger.warn({ accountId, err: describeDiscordError(err) }, "discord slash command registration failed");
  }
}
