import { GrammyError, HttpError } from "grammy";
import { DeliveryError } from "../../src/index.js";

/** True when Telegram refused the HTML markup of a message ("can't parse entities"). */
export function isMarkupRejected(err: unknown): boolean {
  return (
    err instanceof GrammyError &&
    err.error_code === 400 &&
    /can't parse entities|text must be non-empty|message text is empty/i.test(err.description)
  );
}

/**
 * A short, token-free description of a failed Bot API call for logs: grammy's network errors carry
 * the request URL, and the URL carries the bot token, so the raw error is never logged.
 */
export function describeTelegramError(err: unknown): string {
  if (err instanceof GrammyError) return `${err.method}: ${err.error_code} ${err.description}`;
  if (err instanceof HttpError) {
    const cause = err.error as { code?: unknown; name?: unknown } | undefined;
    return `${err.message}${typeof cause?.code === "string" ? ` (${cause.code})` : typeof cause?.name === "string" ? ` (${cause.name})` : ""}`;
  }
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

function refused(message: string, reason: string): DeliveryError {
  return new DeliveryError(message, { retryable: false, reason });
}

/** A refusal that no retry fixes, from what Telegram said: the first rule that matches names the fix. */
const FINAL_REFUSALS: ReadonlyArray<{
  matches: (err: GrammyError) => boolean;
  reason: string;
  message: (chatId: string, err: GrammyError) => string;
}> = [
  {
    matches: (err) => /chat not found/i.test(err.description),
    reason: "chat_not_found",
    message: (chatId) =>
      `Telegram chat ${chatId} not found: the bot was never added to that group, the user never opened a chat with it, or the id is wrong (group ids start with -100).`,
  },
  {
    matches: (err) => /bot was blocked by the user/i.test(err.description),
    reason: "blocked",
    message: (chatId) =>
      `The user of chat ${chatId} blocked the bot; they must unblock it (or send /start) before it can write again.`,
  },
  {
    matches: (err) => err.parameters.migrate_to_chat_id !== undefined,
    reason: "chat_migrated",
    message: (chatId, err) =>
      `Group ${chatId} became supergroup ${err.parameters.migrate_to_chat_id}; deliver to the new id (and update config that names the old one).`,
  },
  {
    matches: (err) => err.error_code === 403,
    reason: "forbidden",
    message: (chatId, err) =>
      `Telegram refused chat ${chatId}: ${err.description}. Add the bot to the chat again or give it permission to write.`,
  },
  {
    matches: (err) => /thread not found/i.test(err.description),
    reason: "thread_not_found",
    message: (chatId, err) =>
      `Telegram topic not found in chat ${chatId}: ${err.description}. The topic may have been deleted.`,
  },
  {
    matches: (err) => err.error_code === 401,
    reason: "unauthorized",
    message: () =>
      "Telegram rejected the bot token (401). Check channels.telegram.botToken, tokenFile or TELEGRAM_BOT_TOKEN.",
  },
];

/** What Telegram's API answered: 429 waits `retry_after`, 5xx is retried, the rest is final. */
function apiError(err: GrammyError, chatId: string): DeliveryError {
  const { error_code: code, description, parameters } = err;
  if (code === 429) {
    const seconds = parameters.retry_after ?? 1;
    return new DeliveryError(`Telegram rate limit: retry after ${seconds}s`, {
      retryable: true,
      reason: "rate_limited",
      retryAfterMs: seconds * 1000,
    });
  }
  if (code >= 500)
    return new DeliveryError(`Telegram server error: ${code} ${description}`, {
      retryable: true,
      reason: "server_error",
    });
  const rule = FINAL_REFUSALS.find((candidate) => candidate.matches(err));
  if (rule) return refused(rule.message(chatId, err), rule.reason);
  return refused(`Telegram refused the message: ${code} ${description}`, "bad_request");
}

/**
 * Turns a failed send into the {@link DeliveryError} the delivery gate understands: 429 waits
 * `retry_after`, network trouble and 5xx are retried, a missing chat or a block is final.
 */
export function toDeliveryError(err: unknown, chatId: string): DeliveryError {
  if (err instanceof DeliveryError) return err;
  if (err instanceof HttpError)
    return new DeliveryError(`Telegram unreachable: ${describeTelegramError(err)}`, {
      retryable: true,
      reason: "network",
    });
  if (!(err instanceof GrammyError))
    return refused(`Telegram send failed: ${describeTelegramError(err)}`, "send_error");
  return apiError(err, chatId);
}
