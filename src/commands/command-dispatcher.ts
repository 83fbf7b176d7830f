import type { InboundMessage } from "../routing/inbound-message.js";
import type { ParsedSessionKey } from "../routing/session-key.js";

/** Who sent a command and what they may do (decided by the inbound access check). */
export interface CommandSender {
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
}

/** What a handled command produced. */
export interface CommandOutcome {
  /** the reply to the sender (always delivered: it answers their own command) */
  reply?: string;
}

/** Runs chat commands; `null` means the message is not a command and goes on to the agent. */
export interface CommandDispatcher {
  dispatch(context: CommandContext): Promise<CommandOutcome | null>;
  /** Whether this sender may start a new session here with `/new` or `/reset`; default: `sender.commands`. */
  mayReset?(context: CommandContext): boolean;
}

/** A dispatcher that knows no commands. */
export const NO_COMMANDS: CommandDispatcher = { dispatch: async () => null };
