import type { CommandOutcome } from "./command-context.js";
import type { CommandScope } from "./command-deps.js";
import type { CommandAccess } from "./command-gate.js";
import type { CommandName, CommandOf } from "./command-grammar.js";

/** One row of the command table: its name, how to use it, who may run it, and what it does. */
export interface CommandDefinition<N extends CommandName = CommandName> {
  name: N;
  /** the usage line, e.g. "/send on|off|inherit" */
  usage: string;
  /** one sentence for /help and docs/commands.md */
  summary: string;
  access: CommandAccess;
  /** Runs the command; null lets the message go on to the agent (an authorized reset trigger). */
  run(command: CommandOf<N>, scope: CommandScope): Promise<CommandOutcome | null>;
}

/** Declares a command (an identity function that checks the row's types). */
export function defineCommand<N extends CommandName>(definition: CommandDefinition<N>): CommandDefinition<N> {
  return definition;
}
