import { resolveLinkedIdentity } from "../routing/identity-links.js";
import type { CommandContext, CommandOutcome } from "./command-context.js";
import { STRINGS } from "./command-strings.js";

/**
 * Who may run a command: `commands` (anyone on the channel's command list), `owner` (owners
 * only), `own-session` (owners anywhere; command users only in a DM session that is theirs alone).
 */
export type CommandAccess = "commands" | "owner" | "own-session";

/**
 * True when the session is the sender's alone: a DM session (per peer, per channel and peer, or
 * per account) whose peer is the sender, directly or through `session.identityLinks` (all linked
 * ids are one person). Never the shared main session, never a group.
 */
export function ownsSession(
  context: CommandContext,
  identityLinks?: Readonly<Record<string, readonly string[]>>,
): boolean {
  const { sessionKey: key, message } = context;
  if (key.kind !== "dm" || message.chat.type !== "direct") return false;
  if (key.channel !== undefined && key.channel !== message.channel) return false;
  const sender = message.sender.id.trim();
  if (key.peerId === sender) return true;
  const linked = resolveLinkedIdentity(identityLinks, message.channel, sender);
  return linked !== undefined && key.peerId.toLowerCase() === linked;
}

/**
 * The one gate every command passes: owners may run everything; the rest as {@link CommandAccess}
 * says. `own-session` commands act on a conversation, so they also need a sender who may talk.
 */
export function authorizeCommand(
  access: CommandAccess,
  context: CommandContext,
  identityLinks?: Readonly<Record<string, readonly string[]>>,
): boolean {
  const { sender } = context;
  if (sender.owner) return true;
  if (access === "owner" || !sender.commands) return false;
  return access === "commands" || (sender.talk && ownsSession(context, identityLinks));
}

/**
 * What an unauthorized command gets: one short answer in a DM, silence in a group (never the
 * model); an answer only the sender sees (a native command's interaction) is given in groups too.
 */
export function refusal(access: CommandAccess, command: string, context: CommandContext): CommandOutcome {
  if (context.message.chat.type !== "direct" && !context.privateReply) return { refused: true };
  return { reply: refusalText(access, command, context), refused: true };
}

function refusalText(access: CommandAccess, command: string, context: CommandContext): string {
  if (!context.sender.commands) return STRINGS.refusedCommands;
  if (access === "owner") return STRINGS.refusedOwner(command);
  return context.sender.talk ? STRINGS.refusedOwnSession(command) : STRINGS.refusedNoTalk(command);
}
