import type { Api } from "grammy";
import type { Message } from "grammy/types";
import type { Logger, OutboundMessage } from "../../src/index.js";
import { markdownToTelegramHtml } from "./markdown-to-html.js";
import { describeTelegramError, isMarkupRejected, toDeliveryError } from "./telegram-errors.js";
import { type TelegramTarget, sendThreadParams } from "./telegram-target.js";

/** How replies quote the message answered: `off` never, `first` only the first piece of a chunked reply, `all` every piece. */
type ReplyToMode = "off" | "first" | "all";

/** What {@link sendText} needs besides the message. */
export interface SendTextOptions {
  replyToMode: ReplyToMode;
  logger: Logger;
  accountId: string;
}

function replyParams(message: OutboundMessage, mode: ReplyToMode) {
  const id = Number(message.replyToMessageId);
  if (mode === "off" || message.replyToMessageId === undefined || !Number.isSafeInteger(id)) return {};
  if (mode === "first" && (message.part?.index ?? 0) > 0) return {};
  // The message answered may be gone by now; the reply then goes out without the quote.
  return { reply_parameters: { message_id: id, allow_sending_without_reply: true } };
}

/**
 * Sends one chunk as one Telegram message: Markdown converted to HTML, into the target's topic
 * (never `message_thread_id` 1), quoting per `replyToMode`. When Telegram rejects the HTML the
 * same chunk is sent again as plain text. Failures become {@link DeliveryError}s; nothing is retried here.
 */
export async function sendText(
  api: Api,
  target: TelegramTarget,
  message: OutboundMessage,
  options: SendTextOptions,
): Promise<Message.TextMessage> {
  const base = { ...sendThreadParams(target), ...replyParams(message, options.replyToMode) };
  try {
    return await api.sendMessage(target.chatId, markdownToTelegramHtml(message.text), { ...base, parse_mode: "HTML" });
  } catch (err) {
    if (!isMarkupRejected(err)) throw toDeliveryError(err, target.chatId);
    // Our converter keeps tags balanced, so this is rare (an entity Telegram dislikes): plain text still reads fine.
    // Telegram's errors carry the bot token in their URL: only the token-free description is logged.
    options.logger.warn(
      { accountId: options.accountId, chatId: target.chatId, err: describeTelegramError(err) },
      "telegram rejected the HTML; sending plain text",
    );
  }
  try {
    return await api.sendMessage(target.chatId, message.text, base);
  } catch (err) {
    throw toDeliveryError(err, target.chatId);
  }
}
