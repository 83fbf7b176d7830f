import type { CommandDefinition } from "./command-definition.js";
import { COMMAND_NAMES, type CommandName } from "./command-grammar.js";
import { compactCommand } from "./handlers/compact-command.js";
import { contextCommand } from "./handlers/context-command.js";
import { modelCommand } from "./handlers/model-command.js";
import { thinkCommand } from "./handlers/think-command.js";
import { verboseCommand } from "./handlers/verbose-command.js";
import { cronCommand } from "./handlers/cron-command.js";
import { createHelpCommand } from "./handlers/help-command.js";
import { pairCommand } from "./handlers/pair-command.js";
import { newCommand, resetCommand } from "./handlers/reset-command.js";
import { queueCommand } from "./handlers/queue-command.js";
import { sendCommand } from "./handlers/send-command.js";
import { statusCommand } from "./handlers/status-command.js";
import { stopCommand } from "./handlers/stop-command.js";
import { subagentsCommand } from "./handlers/subagents-command.js";

/** Every command by name: usage, who may run it (see `authorizeCommand`), handler. */
export const COMMANDS: { readonly [N in CommandName]: CommandDefinition<N> } = {
  help: createHelpCommand(() => COMMAND_LIST),
  status: statusCommand,
  send: sendCommand,
  stop: stopCommand,
  new: newCommand,
  reset: resetCommand,
  compact: compactCommand,
  context: contextCommand,
  subagents: subagentsCommand,
  model: modelCommand,
  think: thinkCommand,
  verbose: verboseCommand,
  cron: cronCommand,
  pair: pairCommand,
  queue: queueCommand,
};

/** The commands in the order /help and the docs list them. */
export const COMMAND_LIST: readonly CommandDefinition[] = COMMAND_NAMES.map(
  (name) => COMMANDS[name] as CommandDefinition,
);

/** The commands only owners may run anywhere. */
export function ownerOnlyCommands(): CommandName[] {
  return COMMAND_LIST.filter((c) => c.access === "owner").map((c) => c.name);
}
