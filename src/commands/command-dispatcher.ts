import { buildModelCatalog } from "../agents/models/index.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import type { CommandDeps, CommandScope } from "./command-deps.js";
import type { CommandDefinition } from "./command-definition.js";
import { authorizeCommand, refusal } from "./command-gate.js";
import {
  type CommandInvocation,
  type CommandName,
  type CommandOf,
  CommandUsageError,
  type GrammarResult,
} from "./command-grammar.js";
import { STRINGS } from "./command-strings.js";
import { COMMANDS } from "./command-table.js";
import { parseCommand, resetTriggerText } from "./parse-command.js";

/** Who sent a command and what they may do (decided by the inbound access check). */
export interface CommandSender {
  /** may talk to the agent (a command user may not) */
  talk: boolean;
  commands: boolean;
  owner: boolean;
}

/** Everything a command handler may look at. */
export interface CommandContext {
  message: InboundMessage;
  /** the session the command acts on */
  sessionKey: ParsedSessionKey;
  agentId: string;
  sender: CommandSender;
  /** a native slash command the adapter already parsed; read instead of `message.text` */
  command?: CommandInvocation;
  /**
   * The answer reaches the sender alone (a native command's interaction, answered ephemerally):
   * refusals are then answered in groups too, where they are otherwise silent.
   */
  privateReply?: boolean;
}

/** What a handled command produced. */
export interface CommandOutcome {
  /** the reply to the sender (always delivered: it answers their own command); none = handled silently */
  reply?: string;
  /** the sender may not run this command: nothing ran, and nothing is kept in the session's history */
  refused?: true;
  /**
   * Shown to the sender alone (set for help when {@link CommandContext.privateReply}); refusals
   * are always answered that way there too.
   */
  ephemeral?: true;
}

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
    const bot = deps.botIdentity?.(context.message.channel, context.message.accountId);
    return parseCommand(context.command ?? context.message.text, {
      ...(bot && { bot }),
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
      const message = err instanceof Error ? err.message : String(err);
      logger.warn({ sessionKey: context.sessionKey.key, command: label, err: message }, "command failed");
      return { reply: STRINGS.failed(label, message) };
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
