import type http from "node:http";
import {
  type ChannelAdapter,
  type DeliveryContext,
  type Logger,
  channelAccountIds,
  normalizeAccountId,
  resolveAccountSettings,
  runningAccount,
  stopRunningAccounts,
} from "../../src/index.js";
import { type AccountBot, startAccountBot } from "./account-bot.js";
import type { NativeCommand } from "./native-commands.js";
import type { PollBackoff } from "./poll-updates.js";
import { sendText } from "./send-text.js";
import { type TelegramConfig, resolveTelegramAccounts } from "./telegram-accounts.js";
import { describeTelegramError } from "./telegram-errors.js";
import { actionThreadParams, parseTelegramTarget, telegramTargets } from "./telegram-target.js";

/** Dependencies of {@link createTelegramAdapter}; the adapter reads no globals. */
export interface TelegramAdapterDeps {
  /** `$SWITCHBOARD_HOME`: offsets live in `channels/telegram/<account>/offset.json` */
  home: string;
  /** the process environment, passed in (TELEGRAM_BOT_TOKEN) */
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
  /** the user's home, for `~/` in `tokenFile` */
  homeDir?: string;
  /** the command menu registered with setMyCommands; default none */
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
  /** The account's bot `@username` (for the core's `/cmd@bot` parsing), once getMe answered. */
  /** the bot's `@username` on this account, once it has started */
  identity(accountId: string): { botUsername: string } | undefined;
}

/** The longest chunk every account accepts: the smallest of the accounts' `textChunkLimit`. */
function textLimitOf(config: TelegramConfig): number {
  const limits = channelAccountIds(config).map((id) => resolveAccountSettings("telegram", config, id).textChunkLimit);
  return Math.min(...limits);
}

/**
 * Creates the Telegram adapter: one grammy bot per configured account (tokens are read at
 * `start`), long polling or a webhook, and sends routed by the target's `accountId`. It maps and
 * sends; access, mention gating, commands and keys are the core's.
 */
export function createTelegramAdapter(config: TelegramConfig, deps: TelegramAdapterDeps): TelegramAdapter {
  const bots = new Map<string, AccountBot>();
  const { logger } = deps;

  const botFor = (target: DeliveryContext): AccountBot =>
    runningAccount(bots, target, { name: "Telegram", channel: "telegram" });

  return {
    id: "telegram",
    capabilities: {
      maxTextLength: textLimitOf(config),
      markup: true,
      typing: true,
      edit: true,
      reactions: true,
      readReceipts: false,
      nativeCommands: true,
      threads: true,
      deduplicatesSends: false,
      gatewayClients: false,
    },
    targets: telegramTargets,

    async start(sink) {
      await stopRunningAccounts(bots); // a second start replaces the bots instead of running them twice
      const accounts = await resolveTelegramAccounts(config, {
        env: deps.env,
        home: deps.home,
        ...(deps.homeDir && { homeDir: deps.homeDir }),
      });
      try {
        for (const account of accounts) {
          const bot = await startAccountBot(account, { ...deps, sink, commands: deps.commands ?? [] });
          bots.set(account.accountId, bot);
        }
      } catch (err) {
        await stopRunningAccounts(bots);
        throw err;
      }
      logger.info(
        { accounts: accounts.map((a) => ({ accountId: a.accountId, mode: a.webhook ? "webhook" : "polling" })) },
        "telegram adapter started",
      );
    },

    stop: () => stopRunningAccounts(bots),

    async send(target, message) {
      const bot = botFor(target);
      const sent = await sendText(bot.bot.api, parseTelegramTarget(target), message, {
        replyToMode: bot.account.settings.replyToMode,
        logger,
        accountId: bot.account.accountId,
      });
      return { messageIds: [String(sent.message_id)] };
    },

    async typing(target) {
      try {
        const parsed = parseTelegramTarget(target);
        await botFor(target).bot.api.sendChatAction(parsed.chatId, "typing", actionThreadParams(parsed));
      } catch (err) {
        // Typing is a courtesy: a failure is logged and the run goes on.
        logger.debug({ chatId: target.to, err: describeTelegramError(err) }, "telegram typing failed");
      }
    },

    async handleHttp(req, res) {
      for (const bot of bots.values()) if (await bot.handleHttp(req, res)) return true;
      return false;
    },

    identity(accountId) {
      const username = bots.get(normalizeAccountId(accountId))?.info()?.username;
      return username ? { botUsername: username } : undefined;
    },
  };
}
