import { Bot } from "grammy";
import type { Update, UserFromGetMe } from "grammy/types";
import type { AdapterStartContext, InboundSink, Logger } from "../../src/index.js";
import { type BotApiClient, createBotApiClient } from "./bot-api-client.js";
import { type BotHealth, botIdentity } from "./bot-identity.js";
import { connectAccount } from "./connect-account.js";
import type { NativeCommand } from "./native-commands.js";
import { offsetFilePath, openOffsetStore } from "./offset-store.js";
import type { PollBackoff } from "./poll-updates.js";
import type { TelegramAccount } from "./telegram-accounts.js";
import { describeTelegramError } from "./telegram-errors.js";
import { NotStoredError } from "./not-stored-error.js";
import { toInbound } from "./to-inbound.js";
import { type WebhookRoute, createWebhookRoute } from "./webhook-route.js";

/** What one account's bot needs from the adapter. */
export interface AccountBotDeps {
  /** `$SWITCHBOARD_HOME`: where an earlier version's offset file is imported from */
  home: string;
  logger: Logger;
  sink: InboundSink;
  /** the gateway's start context: the offset is a row of the channel state */
  context: AdapterStartContext;
  commands: readonly NativeCommand[];
  /** long-poll seconds; default `timeoutSeconds - 5`, at most 25 */
  pollTimeoutSeconds?: number;
  pollBackoff?: PollBackoff;
}

/** One running bot: its API, its identity once known, its webhook route, and how to stop it. */
export interface AccountBot {
  account: TelegramAccount;
  bot: Bot;
  /** started send-only (./send-only-bot.ts): it neither polls nor serves a webhook */
  sendOnly?: boolean;
  /** the bot's identity from getMe (undefined until Telegram answered) */
  info(): UserFromGetMe | undefined;
  /** Serves a webhook POST for this bot; false when the request is not for its path. */
  handleHttp: WebhookRoute;
  /** whether Telegram said who the bot is yet, and why not (started during an outage) */
  health: BotHealth;
  /** send-only: asks getMe again while Telegram has not answered (never throws; the send says what went wrong) */
  ready?(): Promise<void>;
  /** Takes in one update as the webhook and the poller do; resolves once stored (or ignored), rejects when it was not. */
  handle(update: Update): Promise<void>;
  stop(): Promise<void>;
}

/** The webhook route of a polling (or send-only) bot: no request is for it. */
export const NO_ROUTE: WebhookRoute = async () => false;

/** A grammy bot with our own keep-alive HTTP client, closed on stop so idle sockets never hold the process open. */
export function createBot(account: TelegramAccount): { bot: Bot; client: BotApiClient } {
  const apiRoot = account.settings.apiRoot?.replace(/\/+$/, "");
  const client = createBotApiClient();
  const timeoutSeconds = account.settings.timeoutSeconds;
  return {
    bot: new Bot(account.token, { client: { ...(apiRoot && { apiRoot }), timeoutSeconds, fetch: client.fetch } }),
    client,
  };
}

/**
 * Starts one account: getMe (a rejected token fails the start; Telegram away does not: the account
 * starts not connected and is asked again with the poll backoff), then in the background
 * {@link connectAccount}. Every update goes through grammy's `handleUpdate` to {@link toInbound}
 * and the sink; the update is acknowledged to Telegram (offset, webhook 200) only once the sink
 * has stored it.
 */
export async function startAccountBot(account: TelegramAccount, deps: AccountBotDeps): Promise<AccountBot> {
  const { accountId } = account;
  const { logger } = deps;
  const { bot, client } = createBot(account);
  const controller = new AbortController();
  bot.use(async (ctx) => {
    let message: ReturnType<typeof toInbound>;
    try {
      message = toInbound(ctx.update, bot.botInfo, accountId);
    } catch (err) {
      // A malformed update can never be handled: it is logged and acknowledged, never retried.
      return void logger.warn({ accountId, updateId: ctx.update?.update_id, err }, "malformed telegram update ignored");
    }
    if (!message) return void logger.debug({ accountId, updateId: ctx.update.update_id }, "telegram update ignored");
    // Rejects only when the core could not store the message: the update must then not be acknowledged.
    await deps.sink(message).catch((err: unknown) => {
      throw new NotStoredError(err);
    });
  });
  /** Resolves once the update is stored (or ignored); rejects when it must be delivered again. */
  const handle = (update: Update) => bot.handleUpdate(update);
  // Telegram away: started not connected; connectAccount asks again with the poll backoff.
  const identity = botIdentity(
    bot,
    account,
    logger,
    "not connected: Telegram not reached yet, connecting in the background",
  );
  await identity.ask();
  const timeoutSeconds = account.settings.timeoutSeconds;
  const { state } = deps.context;
  const offsets = await openOffsetStore(state.rows(accountId), {
    logger,
    legacyFile: offsetFilePath(deps.home, accountId),
    readOnly: state.readOnly,
  });
  const connectDeps = {
    ...deps,
    offsets,
    handle,
    identity,
    pollTimeoutSeconds: deps.pollTimeoutSeconds ?? Math.max(1, Math.min(25, timeoutSeconds - 5)),
    ...(deps.context.mayAct && { mayPoll: deps.context.mayAct }),
  };
  const running = connectAccount(bot, account, connectDeps, controller.signal).catch((err: unknown) => {
    if (!controller.signal.aborted)
      logger.error({ accountId, err: describeTelegramError(err) }, "telegram bot stopped");
  });
  return {
    account,
    bot,
    info: () => (bot.isInited() ? bot.botInfo : undefined),
    health: identity.health,
    handleHttp: account.webhook
      ? createWebhookRoute(bot, account.webhook, { logger, accountId, before: deps.context.beforeInbound })
      : NO_ROUTE,
    handle,
    async stop() {
      controller.abort();
      await running;
      await client.close();
    },
  };
}
