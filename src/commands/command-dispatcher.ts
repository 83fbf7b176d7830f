import { buildModelCatalog } from "../agents/models/index.js";
import { asModelError } from "../agents/models/model-error.js";
import { chatErrorText } from "../errors.js";
import type { CommandContext, CommandOutcome } from "./command-context.js";
import type { CommandDeps, CommandScope } from "./command-deps.js";
import type { CommandDefinition } from "./command-definition.js";
import { authorizeCommand, refusal } from "./command-gate.js";
import { type CommandName, type CommandOf, CommandUsageError, type GrammarResult } from "./command-grammar.js";
import { STRINGS } from "./command-strings.js";
import { COMMANDS } from "./command-table.js";
import { parseCommand, resetTriggerText } from "./parse-command.js";

/** Runs chat commands; `null` means the message is not a command and goes on to the agent. */
export interface CommandDispatcher {
  dispatch(context: CommandContext): Promise<CommandOutcome | null>;
  /** Whether this sender may start a new session here with `/new` or `/reset`; default: `sender.commands`. */
  mayReset?(context: CommandContext): boolean;
  /**
   * For a reset trigger addressed to this bot: the text the session lifecycle should match
   * (`/new gpt-4o hi`, without a leading mention or `@bot`); undefined for anything else.
   */
  resetText?(context: CommandContext): string | undefined;
}

/** A dispatcher that knows no commands. */
export const NO_COMMANDS: CommandDispatcher = { dispatch: async () => null };

/** Commands that work as typed text even then: aborting and resets. */
const ALWAYS_TYPED: ReadonlySet<CommandName> = new Set(["stop", "new", "reset"]);

const nameOf = (parsed: NonNullable<GrammarResult>): CommandName =>
  parsed instanceof CommandUsageError ? parsed.command : parsed.name;
const isReset = (parsed: GrammarResult): parsed is CommandOf<"new"> | CommandOf<"reset"> =>
  parsed !== null && !(parsed instanceof CommandUsageError) && (parsed.name === "new" || parsed.name === "reset");

/**
 * The command dispatcher: parses once, authorizes once (one gate for every command), runs the
 * handler from the command table and turns its errors into the reply. Unauthorized commands get
 * one short refusal in a DM and silence in a group; they never reach the model.
 */
export function createCommandDispatcher(deps: CommandDeps): Required<CommandDispatcher> {
  const { config, logger } = deps;
  const now = deps.now ?? Date.now;
  const catalog = deps.catalog ?? buildModelCatalog(config);
  const links = config.session.identityLinks;

  function parse(context: CommandContext): GrammarResult {
    return parseCommand(context.command ?? context.message.text, {
      resetTriggers: config.session.resetTriggers,
      bareAbortWords: config.commands.bareAbortWords,
    });
  }

  const typedTextOff = (context: CommandContext, name: CommandName) =>
    !config.commands.text &&
    context.command === undefined &&
    // Only where the platform has its own command menu can typed commands be switched off.
    deps.capabilitiesOf?.(context.message.channel)?.nativeCommands === true &&
    !ALWAYS_TYPED.has(name);

  async function run(
    definition: CommandDefinition,
    parsed: Exclude<GrammarResult, null | CommandUsageError>,
    context: CommandContext,
    label: string,
  ) {
    const scope: CommandScope = {
      context,
      deps,
      sessions: await deps.sessions.forAgent(context.agentId),
      catalog,
      now,
    };
    try {
      return await definition.run(parsed as never, scope);
    } catch (err) {
      // The chat edge: a known error says its message; a bug gets an apology with the error id it logged.
      const fields = { sessionKey: context.sessionKey.key, command: label };
      return { reply: STRINGS.failed(label, chatErrorText(asModelError(err), logger, "command failed", fields)) };
    }
  }

  return {
    async dispatch(context) {
      const parsed = parse(context);
      if (parsed === null) return null;
      const name = nameOf(parsed);
      if (typedTextOff(context, name)) return null;
      const definition = COMMANDS[name] as CommandDefinition;
      const label = isReset(parsed) ? parsed.trigger : `/${name}`;
      if (!authorizeCommand(definition.access, context, links)) {
        // A bare "stop" from someone who may not abort is just a word in the conversation.
        if (!(parsed instanceof CommandUsageError) && parsed.name === "stop" && parsed.bare) return null;
        logger.info(
          { sessionKey: context.sessionKey.key, sender: context.message.sender.id, command: label },
          "command refused",
        );
        return refusal(definition.access, label, context);
      }
      if (parsed instanceof CommandUsageError) return { reply: STRINGS.usage(definition.usage, parsed.detail) };
      const outcome = await run(definition, parsed, context, label);
      return outcome && name === "help" && context.privateReply ? { ...outcome, ephemeral: true } : outcome;
    },

    mayReset: (context) => authorizeCommand(COMMANDS.new.access, context, links),

    resetText(context) {
      const parsed = parse(context);
      return isReset(parsed) ? resetTriggerText(parsed) : undefined;
    },
  };
}
