import type http from "node:http";
import type { Update } from "grammy/types";
import {
  type ChannelAdapter,
  type DeliveryContext,
  type Logger,
  type OutboundMessage,
  createAccountAdapter,
} from "../../src/index.js";
import { type AccountBot, startAccountBot } from "./account-bot.js";
import type { NativeCommand } from "./native-commands.js";
import type { PollBackoff } from "./poll-updates.js";
import { startSendOnlyBot } from "./send-only-bot.js";
import { sendText } from "./send-text.js";
import { standbyWebhookRoute } from "./standby-webhook.js";
import { resolveTelegramAccounts } from "./telegram-accounts.js";
import { type TelegramConfig, telegramConfig } from "./telegram-config.js";
import { describeTelegramError } from "./telegram-errors.js";
import { actionThreadParams, parseTelegramTarget, telegramTargets } from "./telegram-target.js";

/** Dependencies of {@link createTelegramAdapter}; the adapter reads no globals. */
export interface TelegramAdapterDeps {
  /** `$SWITCHBOARD_HOME`: token files; an earlier version's `channels/telegram/<account>/offset.json` is imported from it */
  home: string;
  /** the process environment, passed in (TELEGRAM_BOT_TOKEN) */
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
  /** the user's home, for `~/` in `tokenFile` */
  homeDir?: string;
  /** the command menu registered with setMyCommands; none when not given */
  commands?: readonly NativeCommand[];
  /** long-poll seconds per getUpdates (tests shorten it); default `timeoutSeconds - 5`, at most 25 */
  pollTimeoutSeconds?: number;
  /** backoff after a failed poll (tests shorten it); default 2 s to 30 s */
  pollBackoff?: PollBackoff;
}

/** The Telegram {@link ChannelAdapter} with its optional capabilities, plus its webhook route. */
export interface TelegramAdapter extends ChannelAdapter {
  /** Typing indicator in the target chat and topic (`1` included); best effort, never throws. */
  typing(target: DeliveryContext): Promise<void>;
  /** Serves a webhook POST when the path is one of the accounts' `webhookPath`; false otherwise. */
  handleHttp(req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean>;
}

/**
 * Creates the Telegram adapter: one grammy bot per configured account (tokens are read at
 * `start`), long polling or a webhook, and sends routed by the target's `accountId`. Started
 * send-only (`context.receive` false) each bot only sends (./send-only-bot.ts). It maps and
 * sends; access, mention gating, commands and keys are the core's.
 */
export function createTelegramAdapter(config: TelegramConfig, deps: TelegramAdapterDeps): TelegramAdapter {
  const { logger } = deps;
  const { adapter, accountFor, running } = createAccountAdapter({
    channel: telegramConfig,
    section: config,
    name: "Telegram",
    capabilities: { typing: true, nativeCommands: true, deduplicatesSends: false, gatewayClients: false },
    limits: (settings) => ({ maxTextLength: settings.textChunkLimit }),
    targets: telegramTargets,
    logger,
    accounts: () =>
      resolveTelegramAccounts(config, {
        env: deps.env,
        home: deps.home,
        ...(deps.homeDir && { homeDir: deps.homeDir }),
      }),
    startAccount: (account, sink, context) =>
      context.receive === false
        ? startSendOnlyBot(account, logger)
        : startAccountBot(account, { ...deps, sink, context, commands: deps.commands ?? [] }),
    describe: (bot: AccountBot) => ({
      accountId: bot.account.accountId,
      mode: bot.sendOnly ? "send-only" : bot.account.webhook ? "webhook" : "polling",
    }),
    send: (bot, target, message) => sendOnBot(bot, target, message, logger),
  });
  return {
    ...adapter,
    typing: createTyping(accountFor, logger),
    async handleHttp(req, res) {
      for (const bot of running.values()) if (await bot.handleHttp(req, res)) return true;
      return false;
    },
    async standbyWebhook(handOff) {
      const accounts = await resolveTelegramAccounts(config, {
        env: deps.env,
        home: deps.home,
        ...(deps.homeDir && { homeDir: deps.homeDir }),
      });
      const routes = accounts.map((account) => standbyWebhookRoute(account, handOff, logger));
      return async (req, res) => {
        for (const route of routes) if (await route(req, res)) return true;
        return false;
      };
    },
    async takeHandedOff(accountId, payload) {
      const bot = running.get(accountId);
      // Not a running account of this owner: it can never be taken in here (set aside).
      if (!bot) throw new Error(`telegram account "${accountId}" is not running on this gateway`);
      // grammy runs the middleware up to the sink before its first await: the store is queued at once.
      await bot.handle(payload as Update);
    },
  };
}

/** One message out through one account's bot. */
async function sendOnBot(bot: AccountBot, target: DeliveryContext, message: OutboundMessage, logger: Logger) {
  await bot.ready?.(); // a send-only bot started while Telegram was away asks who it is again
  const sent = await sendText(bot.bot.api, parseTelegramTarget(target), message, {
    replyToMode: bot.account.settings.replyToMode,
    logger,
    accountId: bot.account.accountId,
  });
  return { messageIds: [String(sent.message_id)] };
}

/** The typing action in the target's chat and topic, on the target's account; best effort, never throws. */
function createTyping(accountFor: (target: DeliveryContext) => AccountBot, logger: Logger): TelegramAdapter["typing"] {
  return async (target) => {
    try {
      const parsed = parseTelegramTarget(target);
      await accountFor(target).bot.api.sendChatAction(parsed.chatId, "typing", actionThreadParams(parsed));
    } catch (err) {
      // Typing is a courtesy: a failure is logged and the run goes on.
      logger.debug({ chatId: target.to, err: describeTelegramError(err) }, "telegram typing failed");
    }
  };
}
