// The Telegram webhook on a standby gateway (docs/scale-out.md "Inbound on any gateway"): the same
// route the owner serves (secret, method, type, size, an update), but each update is stored for the
// owner in the hand-off inbox instead of the inbox; the owner feeds it to its bot as its webhook would.
import { Bot } from "grammy";
import type { UserFromGetMe } from "grammy/types";
import type { HandOff, Logger } from "../../src/index.js";
import { NotStoredError } from "./not-stored-error.js";
import type { TelegramAccount } from "./telegram-accounts.js";
import { type WebhookRoute, createWebhookRoute } from "./webhook-route.js";

/** A standby never calls Telegram: its bot only reads updates, so it needs no getMe. */
const UNCALLED = { id: 0, is_bot: true, first_name: "standby", username: "standby" } as UserFromGetMe;

/** The update's dedupe key in the hand-off inbox: one row per update of an account, whichever gateway got it first. */
const updateKey = (accountId: string, updateId: number) => `telegram-update:${accountId}:${updateId}`;

/** The route of `account`'s webhook on a standby: each update stored with `handOff` (200 once committed, 503 when not). */
export function standbyWebhookRoute(account: TelegramAccount, handOff: HandOff, logger: Logger): WebhookRoute {
  const { accountId } = account;
  const bot = new Bot(account.token, { botInfo: UNCALLED });
  bot.use(async (ctx) => {
    const item = { accountId, dedupeKey: updateKey(accountId, ctx.update.update_id), payload: ctx.update };
    await handOff(item).catch((err: unknown) => {
      throw new NotStoredError(err);
    });
  });
  return account.webhook ? createWebhookRoute(bot, account.webhook, { logger, accountId }) : async () => false;
}
