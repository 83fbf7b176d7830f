import { z } from "zod";
import type { InboundMessage } from "../routing/inbound-message.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import type { SessionReset } from "../sessions/session-lifecycle.js";
import type { CommandInvocation } from "./command-grammar.js";

/** Who sent a command and what they may do (decided by the inbound access check). */
export interface CommandSender {
  /** may talk to the agent (a command user may not) */
  talk: boolean;
  commands: boolean;
  owner: boolean;
  /** one of the gateway's own clients (terminal, web UI): owner of every account, named by no channel's rules */
  gatewayClient?: true;
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
  /** an authorized `/new` or `/reset`: no reply; a turn runs on a new session (its start applies this) */
  reset?: SessionReset;
}

/**
 * An outcome with no reset, as plain JSON: a command run by the gateway that received it
 * (`/pair` with `cluster.owners: "many"`) travels with the forwarded message and is answered by the session's owner.
 */
export const AnsweredOutcomeSchema = z.object({
  reply: z.string().optional(),
  refused: z.literal(true).optional(),
  ephemeral: z.literal(true).optional(),
});
/** A command's outcome that travels (see {@link AnsweredOutcomeSchema}). */
export type AnsweredOutcome = z.infer<typeof AnsweredOutcomeSchema>;
