import { DEFAULT_ACCOUNT_ID, type InboundMessage } from "../../src/index.js";
import { ChannelKinds, chatOf } from "./chat-of.js";
import { type DiscordMessageEvent, checkMessageShape } from "./message-shape.js";

/** Who the bot is, as far as toInbound needs it. */
export interface DiscordBotUser {
  id: string;
}

/** Per-account choices that decide which messages are turns. */
export interface ToInboundOptions {
  accountId?: string;
  /** answer other bots (never the bot itself) */
  allowBots?: boolean;
  /** take group DMs (channel type 3) */
  groupDms?: boolean;
}

/** Message types that are what a person wrote: default and reply. Everything else (joins, pins, the
 * leftovers of slash commands: 20 chat input, 23 context menu) is not a turn. */
const TURN_TYPES: ReadonlySet<number> = new Set([0, 19]);

const mentionOf = (id: string) => new RegExp(`<@!?${id}>`);

/** The text without a leading mention of this bot (`<@id>` or `<@!id>`), so `<@bot> /status` is a command. */
function withoutLeadingMention(content: string, bot: DiscordBotUser): string {
  return content.replace(new RegExp(`^\\s*<@!?${bot.id}>[\\s,:]*`), "");
}

/** The message a Discord message replies to: its id, and its text and whether the bot wrote it when Discord sent it along. */
function replyOf(
  messageId: string,
  referenced: DiscordMessageEvent["message"]["referenced_message"],
  fromBot: boolean,
) {
  return {
    messageId,
    ...(referenced?.content && { text: referenced.content }),
    ...(referenced?.author && { fromBot }),
  };
}

/**
 * Maps a gateway message to the core's {@link InboundMessage}, or null when it is not a turn: the
 * bot's own messages, other bots' and webhooks' (unless `allowBots`), system messages and slash
 * command leftovers, group DMs (unless `groupDms`), and messages with no text. DMs are `direct`
 * (the peer is the author; `chat.id` is the DM channel replies go to), guild channels and threads
 * are `channel` keyed by their own id; a thread names its parent in `parentId` and its title
 * (`#parent › thread`). Pure: it reads the event and the bot's identity only. Throws
 * {@link MalformedMessageError} for a payload whose fields are missing or of the wrong type.
 */
export function toInbound(
  event: DiscordMessageEvent,
  bot: DiscordBotUser,
  options: ToInboundOptions = {},
): InboundMessage | null {
  const { message, channel } = checkMessageShape(event);
  const { author } = message;
  if (author.id === bot.id) return null;
  if ((author.bot || message.webhook_id !== undefined) && !options.allowBots) return null;
  if (!TURN_TYPES.has(message.type)) return null;
  const guildId = message.guild_id;
  if (channel?.type === ChannelKinds.GROUP_DM && !options.groupDms) return null;
  const text = withoutLeadingMention(message.content, bot);
  if (!text.trim()) return null;
  const referenced = message.referenced_message ?? undefined;
  const repliedToBot = referenced?.author?.id === bot.id;
  const wasMentioned =
    message.mentions.some((user) => user.id === bot.id) || mentionOf(bot.id).test(message.content) || repliedToBot;
  const replyId = referenced?.id ?? message.message_reference?.message_id;
  return {
    channel: "discord",
    accountId: options.accountId ?? DEFAULT_ACCOUNT_ID,
    chat: chatOf(message.channel_id, guildId, channel),
    sender: {
      id: author.id,
      name: message.member?.nick ?? author.global_name ?? author.username,
      username: author.username,
    },
    messageId: message.id,
    text,
    ...(Number.isFinite(Date.parse(message.timestamp)) && { timestamp: Date.parse(message.timestamp) }),
    ...(replyId !== undefined && { replyTo: replyOf(replyId, referenced, repliedToBot) }),
    wasMentioned,
    raw: event,
  };
}
