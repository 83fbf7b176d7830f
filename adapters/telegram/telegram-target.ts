import { type DeliveryContext, DeliveryError, type TargetCodec } from "../../src/index.js";

/** The General topic of a forum: Telegram sends no `message_thread_id` for it and refuses one on sends. */
export const GENERAL_TOPIC_ID = 1;

/** Where a Telegram message goes: a chat id (or `@channelname`) and an optional forum topic or DM thread. */
export interface TelegramTarget {
  chatId: string;
  threadId?: number;
}

const TOPIC_SUFFIX = /^(.+?):(?:topic:)?(\d+)$/;

/**
 * Reads a delivery target. `to` is the chat id; a leaked `telegram:`/`tg:`/`group:` prefix or a
 * `:topic:<n>` suffix (announce target syntax) is tolerated; `threadId` wins over the suffix.
 */
export function parseTelegramTarget(target: DeliveryContext): TelegramTarget {
  const raw = (target.to ?? "")
    .trim()
    .replace(/^(?:telegram|tg):/i, "")
    .replace(/^group:/i, "");
  const suffix = raw.startsWith("@") ? null : TOPIC_SUFFIX.exec(raw);
  const chatId = suffix ? suffix[1]! : raw;
  const thread = target.threadId ?? suffix?.[2];
  if (!/^-?\d+$/.test(chatId) && !/^@\w{4,}$/.test(chatId)) {
    throw new DeliveryError(
      `"${target.to ?? ""}" is not a Telegram chat: use the numeric chat id (groups start with -100) or @channelname.`,
      { retryable: false, reason: "bad_target" },
    );
  }
  if (thread === undefined || thread === "") return { chatId };
  const threadId = Number(thread);
  if (!Number.isSafeInteger(threadId) || threadId < 1) {
    throw new DeliveryError(`Telegram thread "${thread}" is not a topic id: use the forum topic's number.`, {
      retryable: false,
      reason: "bad_target",
    });
  }
  return { chatId, threadId };
}

/** `message_thread_id` for a send: every topic and DM thread except General (1), which Telegram answers "thread not found". */
export function sendThreadParams(target: TelegramTarget): { message_thread_id?: number } {
  return target.threadId !== undefined && target.threadId !== GENERAL_TOPIC_ID
    ? { message_thread_id: target.threadId }
    : {};
}

/** `message_thread_id` for a chat action: typing in General does carry `1`. */
export function actionThreadParams(target: TelegramTarget): { message_thread_id?: number } {
  return target.threadId !== undefined ? { message_thread_id: target.threadId } : {};
}

/**
 * Telegram's targets: `<chatId>` or `@channelname`, then `:topic:<n>` for a forum topic or DM
 * thread (`telegram:-1001234567890:topic:42`). Decoding checks the chat id and topic.
 */
export const telegramTargets: TargetCodec = {
  encode: (target) => {
    const { chatId, threadId } = parseTelegramTarget(target);
    return threadId !== undefined ? `${chatId}:topic:${threadId}` : chatId;
  },
  decode: (text) => {
    const { chatId, threadId } = parseTelegramTarget({ channel: "telegram", to: text });
    return threadId !== undefined
      ? { channel: "telegram", to: chatId, threadId: String(threadId) }
      : { channel: "telegram", to: chatId };
  },
};
