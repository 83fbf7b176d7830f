import { createHash, timingSafeEqual } from "node:crypto";
import type http from "node:http";
import { type Bot, BotError, webhookCallback } from "grammy";
import type { Update } from "grammy/types";
import { NotStoredError } from "./not-stored-error.js";
import type { Logger } from "../../src/index.js";
import type { TelegramWebhook } from "./telegram-accounts.js";

/** The largest webhook body accepted (an update with a 4096-character text is a few kilobytes). */
const MAX_UPDATE_BYTES = 1024 * 1024;

/** Thrown for a JSON body that is not an update (`[]`, `{}`, `{"update_id":"x"}`): answered 400. */
class NotAnUpdateError extends Error {
  override name = "NotAnUpdateError";
}

/** The body as an update: an object with a whole, non-negative `update_id`, as every Bot API update has. */
async function readUpdate(req: http.IncomingMessage): Promise<Update> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    // A chunked body declares no length up front; it is still cut off at the limit.
    if (size > MAX_UPDATE_BYTES) throw new NotAnUpdateError(`the body is larger than ${MAX_UPDATE_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const body: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const id = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Update).update_id : undefined;
  if (!Number.isSafeInteger(id) || id! < 0)
    throw new NotAnUpdateError("the body is not a Telegram update (no update_id)");
  return body as Update;
}

/** Telegram's secret header, as sent (the first of a repeated header). */
function secretHeader(req: http.IncomingMessage): string | undefined {
  const secret = req.headers["x-telegram-bot-api-secret-token"];
  return Array.isArray(secret) ? secret[0] : secret;
}

/** Whether the request carries `secret`, compared in constant time (digests: equal lengths whatever was sent). */
function secretMatches(req: http.IncomingMessage, secret: string): boolean {
  const given = secretHeader(req);
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return given !== undefined && timingSafeEqual(digest(secret), digest(given));
}

/** grammy's Node `http` adapter, but reading the update through {@link readUpdate}. */
function updateRequest(req: http.IncomingMessage, res: http.ServerResponse) {
  return {
    // Read only after the route has checked the secret header.
    get update() {
      return readUpdate(req);
    },
    header: secretHeader(req),
    end: () => res.end(),
    respond: (json: string) => res.writeHead(200, { "content-type": "application/json" }).end(json),
    unauthorized: () => res.writeHead(401).end("secret token is wrong"),
  };
}

/** Serves one HTTP request if it is for this route; resolves false when the path is not its own. */
export type WebhookRoute = (req: http.IncomingMessage, res: http.ServerResponse) => Promise<boolean>;

/** Refuses, before its body is read, what cannot be an update: another method (405), another content type (415), over 1 MiB (413). */
function refusedUnread(req: http.IncomingMessage, res: http.ServerResponse): boolean {
  if (req.method !== "POST") {
    res.writeHead(405, { allow: "POST" }).end();
    return true;
  }
  // Telegram posts JSON of a few kilobytes; anything else is refused before the body is read.
  if (!/^application\/json\b/i.test(req.headers["content-type"] ?? "")) {
    res.writeHead(415).end();
    return true;
  }
  if (Number(req.headers["content-length"] ?? 0) > MAX_UPDATE_BYTES) {
    res.writeHead(413, { connection: "close" }).end();
    return true;
  }
  return false;
}

/**
 * The webhook endpoint of one bot: POST at `webhook.path` with Telegram's secret header (checked
 * in constant time before anything else is done for the request, 401 otherwise), 405 for other methods, 415 for another
 * content type, 413 over 1 MiB, 400 for a body that is not an update. 200 only once the update is
 * stored (or found malformed and logged); 503 when it could not be stored (Telegram resends).
 * `before` (a cluster owner's hand-off drain, bounded by itself) is awaited before the update is stored.
 */
export function createWebhookRoute(
  bot: Bot,
  webhook: TelegramWebhook,
  deps: { logger: Logger; accountId: string; before?: (() => Promise<void>) | undefined },
): WebhookRoute {
  // The secret is checked once, by the route below (before the drain), not again by grammy.
  const callback = webhookCallback(bot, updateRequest, {
    onTimeout: "throw",
    timeoutMilliseconds: 10_000,
  });
  return async (req, res) => {
    if (new URL(req.url ?? "/", "http://gateway").pathname !== webhook.path) return false;
    if (refusedUnread(req, res)) return true;
    // Before the drain: a request without the secret starts no pass.
    if (!secretMatches(req, webhook.secret)) {
      res.writeHead(401).end("secret token is wrong");
      return true;
    }
    try {
      // On a cluster owner: updates a standby stored for it before this one are stored first.
      await deps.before?.();
      await callback(req, res);
    } catch (err) {
      // Not stored (or not JSON): no 200, so Telegram delivers it again; a repeat is recognised by the inbox.
      // Not stored, or no time to store it: 503, and Telegram resends (a repeat is recognised by the inbox).
      // Anything else (not JSON, not an update) can never succeed: 400, and Telegram drops it.
      const retry =
        (err instanceof BotError && err.error instanceof NotStoredError) ||
        /timed out/i.test((err as Error)?.message ?? "");
      deps.logger.warn(
        { accountId: deps.accountId, err },
        retry ? "telegram update not stored; Telegram will resend it" : "telegram webhook body is not an update",
      );
      if (!res.headersSent) res.writeHead(retry ? 503 : 400).end();
    }
    return true;
  };
}
