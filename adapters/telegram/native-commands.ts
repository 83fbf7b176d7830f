import type { BotCommand } from "grammy/types";

/** A command the core understands, as the command table describes it. */
export interface NativeCommand {
  name: string;
  summary: string;
}

const NAME = /^[a-z0-9_]{1,32}$/;
const MAX_DESCRIPTION = 256;

/**
 * The command menu for `setMyCommands`: Telegram allows names of 1-32 lowercase letters, digits
 * and `_`, and descriptions of 1-256 characters; other names are left out, long summaries cut.
 */
export function toBotCommands(commands: readonly NativeCommand[]): BotCommand[] {
  return commands
    .filter((command) => NAME.test(command.name))
    .map((command) => {
      const summary = command.summary.trim() || `/${command.name}`;
      return {
        command: command.name,
        description: summary.length > MAX_DESCRIPTION ? `${summary.slice(0, MAX_DESCRIPTION - 1)}…` : summary,
      };
    });
}
