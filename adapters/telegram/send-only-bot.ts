import type { Logger } from "../../src/index.js";
import { type AccountBot, NO_ROUTE, createBot, identify } from "./account-bot.js";
import type { TelegramAccount } from "./telegram-accounts.js";

/**
 * Starts one account send-only (`AdapterStartContext.receive` false): another gateway holds the
 * account, polls or owns its webhook, and set its command menu. This bot only calls getMe (a
 * rejected token fails the start, as on the holder) and then sends and types through `bot.api`:
 * no getUpdates, no setWebhook or deleteWebhook, no setMyCommands, no offset read or written.
 */
export async function startSendOnlyBot(account: TelegramAccount, logger: Logger): Promise<AccountBot> {
  const { bot, client } = createBot(account);
  await identify(bot, account, logger);
  return {
    account,
    bot,
    sendOnly: true,
    info: () => (bot.isInited() ? bot.botInfo : undefined),
    handleHttp: NO_ROUTE,
    handle: async () => {
      throw new Error(
        `telegram account "${account.accountId}" is send-only on this gateway: the gateway that holds it takes its updates in`,
      );
    },
    stop: () => client.close(),
  };
}
