import type { Logger } from "../../src/index.js";
import { type AccountBot, NO_ROUTE, createBot } from "./account-bot.js";
import { botIdentity } from "./bot-identity.js";
import type { TelegramAccount } from "./telegram-accounts.js";

/**
 * Starts one account send-only (`AdapterStartContext.receive` false): another gateway holds the
 * account, polls or owns its webhook, and set its command menu. This bot only calls getMe (a
 * rejected token fails the start, as on the holder) and then sends and types through `bot.api`:
 * no getUpdates, no setWebhook or deleteWebhook, no setMyCommands, no offset read or written.
 * Telegram away at start (5xx, no connection) does not fail it: the account reports itself not
 * connected and each send asks getMe again first; a send fails (retryably) while Telegram is away.
 */
export async function startSendOnlyBot(account: TelegramAccount, logger: Logger): Promise<AccountBot> {
  const { bot, client } = createBot(account);
  const identity = botIdentity(bot, account, logger, "send-only, Telegram not reached yet (sends are retried)");
  await identity.ask();
  return {
    account,
    bot,
    sendOnly: true,
    info: () => (bot.isInited() ? bot.botInfo : undefined),
    health: identity.health,
    // A refused token fails the send itself (401, final); Telegram away fails it retryably.
    ready: () =>
      identity.ask().then(
        () => undefined,
        () => undefined,
      ),
    handleHttp: NO_ROUTE,
    handle: async () => {
      throw new Error(
        `telegram account "${account.accountId}" is send-only on this gateway: the gateway that holds it takes its updates in`,
      );
    },
    stop: () => client.close(),
  };
}
