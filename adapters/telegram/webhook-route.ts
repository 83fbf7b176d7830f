import type http from "node:http";
import { type Bot, webhookCallback } from "grammy";
import type { Logger } from "../../src/index.js";
import type { TelegramWebhook } from "./telegram-accounts.js";
import { describeTelegramError } from "./telegram-errors.js";

/** Serves one HTTP request if it is for this route; resolves false when the path is not its own. */
export type WebhookRoute = (req: http.IncomingMessage, res: http.ServerResponse) => Promise<boolean>;

/**
 * The webhook endpoint of one bot: POST at `webhook.path` with Telegram's secret header (grammy
 * checks it in constant time and answers 401 otherwise), 405 for other methods, 400 for a body
 * that is not an update. Handling is bounded to 10 s so Telegram does not resend on a slow turn.
 */
export function createWebhookRoute(bot: Bot, webhook: TelegramWebhook, deps: { logger: Logger; accountId: string }): WebhookRoute {
  const callback = webhookCallback(bot, "http", { secretToken: webhook.secret, onTimeout: "return", timeoutMilliseconds: 10_000 });
  return async (req, res) => {
    if (new URL(req.url ?? "/", "http://gateway").pathname !== webhook.path) return false;
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end();
      return true;
    }
    try {
      await callback(req, res);
    } catch (err) {
      // A body that is not an update (or a handler timeout); Telegram gets a 400 and we go on.
      deps.logger.warn({ accountId: deps.accountId, err: describeTelegramError(err) }, "telegram webhook request failed");
      if (!res.headersSent) res.writeHead(400).end();
    }
    return true;
  };
}
