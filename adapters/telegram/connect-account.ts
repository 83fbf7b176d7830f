import { type Bot, GrammyError, HttpError } from "grammy";
import type { Update } from "grammy/types";
import type { Logger } from "../../src/index.js";
import { type ApiSignal, apiSignal } from "./api-signal.js";
import { type BotIdentity, retriedOrAborted } from "./bot-identity.js";
import { type NativeCommand, toBotCommands } from "./native-commands.js";
import type { OffsetStore } from "./offset-store.js";
import { DEFAULT_BACKOFF, type PollBackoff, pollUpdates } from "./poll-updates.js";
import type { TelegramAccount, TelegramWebhook } from "./telegram-accounts.js";
import { describeTelegramError } from "./telegram-errors.js";

/** What {@link connectAccount} needs. */
export interface ConnectDeps {
  /** where polling resumes */
  offsets: OffsetStore;
  logger: Logger;
  commands: readonly NativeCommand[];
  /** seconds Telegram holds an empty getUpdates */
  pollTimeoutSeconds: number;
  pollBackoff?: PollBackoff;
  /** getMe, asked (with the poll backoff) until Telegram answers */
  identity: BotIdentity;
  /** hands one update on; rejects when it was not stored (it is then fetched again) */
  handle: (update: Update) => Promise<void>;
  /** asked before each poll: false while this gateway no longer holds the bot (`AdapterStartContext.mayAct`) */
  mayPoll?: () => Promise<boolean>;
}

/** The bot's command menu; a missing menu is cosmetic (typed commands work without it), so a failure is logged. */
async function setCommandMenu(bot: Bot, account: TelegramAccount, deps: ConnectDeps, aborted: ApiSignal) {
  const commands = toBotCommands(deps.commands);
  if (!commands.length) return;
  await bot.api
    .setMyCommands(commands, undefined, aborted)
    .catch((err: unknown) =>
      deps.logger.warn(
        { accountId: account.accountId, err: describeTelegramError(err) },
        "telegram setMyCommands failed",
      ),
    );
}

/** Telegram away: no connection, a 5xx, or 429. Anything else (401, a refused URL) is a refusal. */
const away = (err: unknown) =>
  err instanceof HttpError || (err instanceof GrammyError && (err.error_code >= 500 || err.error_code === 429));

/** setWebhook; false (logged) while Telegram is away; a refusal (a rejected token, a refused URL) throws. */
async function setWebhook(
  bot: Bot,
  webhook: TelegramWebhook,
  deps: ConnectDeps,
  log: { accountId: string },
  aborted: ApiSignal,
) {
  try {
    await bot.api.setWebhook(webhook.url, { secret_token: webhook.secret, allowed_updates: ["message"] }, aborted);
  } catch (err) {
    if (!away(err)) throw err;
    deps.logger.warn({ ...log, err: describeTelegramError(err) }, "telegram setWebhook failed; will retry");
    return false;
  }
  deps.logger.info({ ...log, url: webhook.url, path: webhook.path }, "telegram webhook set");
  return true;
}

/**
 * Brings one bot online until `signal` aborts: getMe, the command menu, then `setWebhook` in
 * webhook mode, or `deleteWebhook` and long polling with the account's persisted offset. getMe and
 * setWebhook are asked again with the poll backoff while Telegram is unreachable (an account
 * started during an outage); a refusal (a rejected token) ends it, logged "telegram bot stopped".
 */
export async function connectAccount(
  bot: Bot,
  account: TelegramAccount,
  deps: ConnectDeps,
  signal: AbortSignal,
): Promise<void> {
  const { accountId, settings, webhook } = account;
  const { logger } = deps;
  const aborted = apiSignal(signal);
  const backoff = deps.pollBackoff ?? DEFAULT_BACKOFF;
  if (!(await retriedOrAborted(() => deps.identity.ask(signal), backoff, signal))) return;
  if (settings.nativeCommands) await setCommandMenu(bot, account, deps, aborted);
  if (webhook)
    return void (await retriedOrAborted(() => setWebhook(bot, webhook, deps, { accountId }, aborted), backoff, signal));
  // If a webhook is still set, getUpdates answers 409 and polling logs it with a hint.
  await bot.api
    .deleteWebhook({}, aborted)
    .catch((err: unknown) =>
      logger.warn({ accountId, err: describeTelegramError(err) }, "telegram deleteWebhook failed"),
    );
  await pollUpdates({
    api: bot.api,
    botId: bot.botInfo.id,
    accountId,
    signal,
    logger,
    handle: deps.handle,
    offsets: deps.offsets,
    timeoutSeconds: deps.pollTimeoutSeconds,
    ...(deps.pollBackoff && { backoff: deps.pollBackoff }),
    ...(deps.mayPoll && { mayPoll: deps.mayPoll }),
  });
}
