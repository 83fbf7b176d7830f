import type { Message, Update } from "grammy/types";
import { DEFAULT_ACCOUNT_ID, type InboundMessage } from "../../src/index.js";
import { GENERAL_TOPIC_ID } from "./telegram-target.js";
import { type BotInfo, commandAddressee, isTopicRoot, mentionsBot, withoutOwnMention } from "./mentions-bot.js";
import { MalformedUpdateError, checkMessageShape } from "./message-shape.js";

function fullName(first: string, last: string | undefined): string {
  return last ? `${first} ${last}` : first;
}

/** The sender: the user, or the chat a message was sent on behalf of (anonymous admins, linked channels). */
function senderOf(message: Message): InboundMessage["sender"] | undefined {
  const chat = message.sender_chat;
  if (chat)
    return {
      id: String(chat.id),
      ...("title" in chat && chat.title && { name: chat.title }),
      ...(chat.username && { username: chat.username }),
    };
  const from = message.from;
  if (!from) return undefined;
  return {
    id: String(from.id),
    name: fullName(from.first_name, from.last_name),
    ...(from.username && { username: from.username }),
  };
}

/**
 * The thread a message belongs to: in a forum its topic, `1` (General) when Telegram sends no topic;
 * in a DM its thread; in a plain group nothing (there `message_thread_id` is only a reply chain).
 */
function threadOf(message: Message, isGroup: boolean, isForum: boolean): string | undefined {
  if (isForum)
    return String(message.is_topic_message && message.message_thread_id ? message.message_thread_id : GENERAL_TOPIC_ID);
  if (isGroup || message.message_thread_id === undefined) return undefined;
  return String(message.message_thread_id);
}

function replyOf(message: Message, bot: BotInfo): InboundMessage["replyTo"] {
  const replied = message.reply_to_message;
  if (!replied || isTopicRoot(message)) return message.quote ? { text: message.quote.text } : undefined;
  const text = message.quote?.text ?? replied.text ?? replied.caption;
  return {
    messageId: String(replied.message_id),
    ...(text !== undefined && { text }),
    fromBot: replied.from?.id === bot.id,
  };
}

/**
 * Maps a Bot API update to the core's {@link InboundMessage}, or null when there is nothing for the
 * core: not a new message (edits, channel posts, callbacks), no text or caption (stickers, joins), a
 * message the bot wrote itself, or a command addressed to another bot (`/cmd@OtherBot`). Pure: it reads the update and the bot's
 * identity only. A leading mention of this bot and `@ThisBot` after a command are stripped from the
 * text (`wasMentioned` says the bot was addressed), so the core's parser reads `/cmd args`. Throws
 * {@link MalformedUpdateError} for a message whose fields are missing or of the wrong type.
 */
export function toInbound(update: Update, bot: BotInfo, accountId: string = DEFAULT_ACCOUNT_ID): InboundMessage | null {
  if (typeof update !== "object" || update === null) throw new MalformedUpdateError("the update is not an object");
  const message = update.message;
  if (message === undefined || message === null) return null;
  checkMessageShape(message);
  const { chat } = message;
  const text = message.text ?? message.caption;
  const sender = senderOf(message);
  if (text === undefined || !sender) return null;
  // The bot's own messages (seen again in some chats and via business connections) are never input.
  if (message.from?.id === bot.id) return null;
  const addressee = commandAddressee(text);
  if (addressee !== undefined && addressee.toLowerCase() !== bot.username.toLowerCase()) return null;
  const isGroup = chat.type !== "private";
  const isForum = isGroup && "is_forum" in chat && chat.is_forum === true;
  const threadId = threadOf(message, isGroup, isForum);
  const replyTo = replyOf(message, bot);
  return {
    channel: "telegram",
    accountId,
    chat: {
      type: isGroup ? "group" : "direct",
      id: String(chat.id),
      ...(isGroup && "title" in chat && chat.title && { title: chat.title }),
      ...(threadId !== undefined && { threadId }),
      ...(isForum && { isForum }),
    },
    sender,
    messageId: String(message.message_id),
    text: withoutOwnMention(text, bot),
    timestamp: message.date * 1000,
    ...(replyTo && { replyTo }),
    wasMentioned: mentionsBot(message, bot),
    raw: update,
  };
}
