import type { Config } from "../config/schema/index.js";
import { buildModelCatalog } from "../agents/models/index.js";
import { asModelError } from "../agents/models/model-error.js";
import { chatErrorText } from "../errors.js";
import type { CommandContext, CommandOutcome } from "./command-context.js";
import type { CommandDeps, CommandScope } from "./command-deps.js";
import type { CommandDefinition } from "./command-definition.js";
import { authorizeCommand, refusal } from "./command-gate.js";
import { type CommandName, CommandUsageError, type GrammarResult } from "./command-grammar.js";
import { STRINGS } from "./command-strings.js";
import { COMMANDS } from "./command-table.js";
import { type ParseCommandOptions, parseCommand } from "./parse-command.js";

/** How `config` has the dispatcher read a message as a command (a standby asks the same before it stores a `chat.send`). */
export function commandParseOptions(config: Config): ParseCommandOptions {
  return { resetTriggers: config.session.resetTriggers, bareAbortWords: config.commands.bareAbortWords };
}

/**
 * Runs chat commands; `null` means the message is not a command and goes on to the agent. An
 * authorized reset comes back as a value (`outcome.reset`): the turn that follows applies it.
 */
export interface CommandDispatcher {
  dispatch(context: CommandContext): Promise<CommandOutcome | null>;
}

/** A dispatcher that knows no commands. */
export const NO_COMMANDS: CommandDispatcher = { dispatch: async () => null };

/** Commands that work as typed text even then: aborting and resets. */
const ALWAYS_TYPED: ReadonlySet<CommandName> = new Set(["stop", "new", "reset"]);

type Parsed = NonNullable<GrammarResult>;

const nameOf = (parsed: Parsed): CommandName => (parsed instanceof CommandUsageError ? parsed.command : parsed.name);
/** How a command is named in logs and replies: a reset by the trigger the sender used. */
const labelOf = (parsed: Parsed): string =>
  !(parsed instanceof CommandUsageError) && (parsed.name === "new" || parsed.name === "reset")
    ? parsed.trigger
    : `/${nameOf(parsed)}`;

/** True when `commands.text: false` turns this typed command into plain text. */
function typedTextOff(deps: CommandDeps, context: CommandContext, name: CommandName): boolean {
  return (
    !deps.config.commands.text &&
    context.command === undefined &&
    // Only where the platform has its own command menu can typed commands be switched off.
    deps.capabilitiesOf?.(context.message.channel)?.nativeCommands === true &&
    !ALWAYS_TYPED.has(name)
  );
}

/** Runs the handler; a thrown error becomes the reply (a known error its message, a bug an apology with its id). */
async function runHandler(
  definition: CommandDefinition,
  parsed: Exclude<Parsed, CommandUsageError>,
  scope: CommandScope,
  label: string,
): Promise<CommandOutcome | null> {
  try {
    return await definition.run(parsed as never, scope);
  } catch (err) {
    const fields = { sessionKey: scope.context.sessionKey.key, command: label };
    return {
      reply: STRINGS.failed(label, chatErrorText(asModelError(err), scope.deps.logger, "command failed", fields)),
    };
  }
}

/**
 * The command dispatcher: parses once, authorizes once (one gate for every command), runs the
 * handler from the command table and turns its errors into the reply. Unauthorized commands get
 * one short refusal in a DM and silence in a group; they never reach the model.
 */
export function createCommandDispatcher(deps: CommandDeps): CommandDispatcher {
  const { config, logger } = deps;
  const now = deps.now ?? Date.now;
  const catalog = deps.catalog ?? buildModelCatalog(config);
  const links = config.session.identityLinks;
  const options = commandParseOptions(config);

  /** The refusal for a sender the gate turned away; null for a bare "stop", which is then just a word. */
  function refuse(definition: CommandDefinition, parsed: Parsed, context: CommandContext, label: string) {
    if (!(parsed instanceof CommandUsageError) && parsed.name === "stop" && parsed.bare) return null;
    logger.info(
      { sessionKey: context.sessionKey.key, sender: context.message.sender.id, command: label },
      "command refused",
    );
    return refusal(definition.access, label, context);
  }

  return {
    async dispatch(context) {
      const parsed = parseCommand(context.command ?? context.message.text, options);
      if (parsed === null || typedTextOff(deps, context, nameOf(parsed))) return null;
      const definition = COMMANDS[nameOf(parsed)] as CommandDefinition;
      const label = labelOf(parsed);
      if (!authorizeCommand(definition.access, context, links)) return refuse(definition, parsed, context, label);
      if (parsed instanceof CommandUsageError) return { reply: STRINGS.usage(definition.usage, parsed.detail) };
      const sessions = await deps.sessions.forAgent(context.agentId);
      const outcome = await runHandler(definition, parsed, { context, deps, sessions, catalog, now }, label);
      return outcome && nameOf(parsed) === "help" && context.privateReply ? { ...outcome, ephemeral: true } : outcome;
    },
  };
}
