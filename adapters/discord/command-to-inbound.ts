import { DEFAULT_ACCOUNT_ID, type InboundMessage } from "../../src/index.js";
import { chatOf } from "./chat-of.js";
import type { DiscordPlace } from "./message-shape.js";

/** A slash command as the adapter reads it from a discord.js interaction (plain data, for tests and logs). */
export interface DiscordCommandEvent {
  /** the interaction id */
  id: string;
  name: string;
  /** the `input` option: the arguments as typed */
  input?: string;
  channelId: string;
  guildId?: string;
  channel?: DiscordPlace;
  user: { id: string; username: string; globalName?: string | null };
  /** the member's server nickname */
  nick?: string | null;
  /** when Discord created it (ms) */
  createdAt?: number;
}

/**
 * Maps a slash command to the {@link InboundMessage} of the chat it was typed in (its session is the
 * one the command acts on): `command` carries the name and arguments, `text` reads `/name args`.
 * A slash command is addressed to the bot, so it counts as a mention. Pure.
 */
export function commandToInbound(event: DiscordCommandEvent, accountId: string = DEFAULT_ACCOUNT_ID): InboundMessage {
  const args = event.input?.trim() ?? "";
  return {
    channel: "discord",
    accountId,
    chat: chatOf(event.channelId, event.guildId, event.channel),
    sender: {
      id: event.user.id,
      name: event.nick ?? event.user.globalName ?? event.user.username,
      username: event.user.username,
    },
    messageId: `interaction:${event.id}`,
    text: args ? `/${event.name} ${args}` : `/${event.name}`,
    ...(event.createdAt !== undefined && { timestamp: event.createdAt }),
    wasMentioned: true,
    command: { name: event.name, args },
    raw: event,
  };
}
