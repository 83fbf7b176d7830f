import type http from "node:http";
import { type Bot, webhookCallback } from "grammy";
import type { Logger } from "../../src/index.js";
import type { TelegramWebhook } from "./telegram-accounts.js";

/** Serves one HTTP request if it is for this route; resolves false when the path is not its own. */
export type WebhookRoute = (req: http.IncomingMessage, res: http.ServerResponse) => Promise<boolean>;

/**
 * The webhook endpoint of one bot: POST at `webhook.path` with Telegram's secret header (grammy
 * checks it in constant time and answers 401 otherwise), 405 for other methods, 400 for a body
 * that is not JSON. 200 only once the update is stored; 503 when it could not be (Telegram resends).
 */
export function createWebhookRoute(bot: Bot, webhook: TelegramWebhook, deps: { logger: Logger; accountId: string }): WebhookRoute {
  const callback = webhookCallback(bot, "http", { secretToken: webhook.secret, onTimeout: "throw", timeoutMilliseconds: 10_000 });
  return async (req, res) => {
    if (new URL(req.url ?? "/", "http://gateway").pathname !== webhook.path) return false;
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end();
      return true;
    }
    try {
      await callback(req, res);
    } catch (err) {
      // Not stored (or not JSON): no 200, so Telegram delivers it again; a repeat is recognised by the inbox.
      const notJson = err instanceof SyntaxError;
      deps.logger.warn({ accountId: deps.accountId, err }, notJson ? "telegram webhook body is not JSON" : "telegram update not stored; Telegram will resend it");
      if (!res.headersSent) res.writeHead(notJson ? 400 : 503).end();
    }
    return true;
  };
}
