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
  if (/chat not found/i.test(description)) {
    return refused(
      `Telegram chat ${chatId} not found: the bot was never added to that group, the user never opened a chat with it, or the id is wrong (group ids start with -100).`,
      "chat_not_found",
    );
  }
  if (/bot was blocked by the user/i.test(description))
    return refused(
      `The user of chat ${chatId} blocked the bot; they must unblock it (or send /start) before it can write again.`,
      "blocked",
    );
  if (parameters.migrate_to_chat_id !== undefined) {
    return refused(
      `Group ${chatId} became supergroup ${parameters.migrate_to_chat_id}; deliver to the new id (and update config that names the old one).`,
      "chat_migrated",
    );
  }
  if (code === 403)
    return refused(
      `Telegram refused chat ${chatId}: ${description}. Add the bot to the chat again or give it permission to write.`,
      "forbidden",
    );
  if (/thread not found/i.test(description))
    return refused(
      `Telegram topic not found in chat ${chatId}: ${description}. The topic may have been deleted.`,
      "thread_not_found",
    );
  if (code === 401)
    return refused(
      "Telegram rejected the bot token (401). Check channels.telegram.botToken, tokenFile or TELEGRAM_BOT_TOKEN.",
      "unauthorized",
    );
  return refused(`Telegram refused the message: ${code} ${description}`, "bad_request");
}
