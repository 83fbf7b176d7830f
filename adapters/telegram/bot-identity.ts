import { setTimeout as sleep } from "node:timers/promises";
import { type Bot, GrammyError } from "grammy";
import { type Logger, ErrorCodes, SwitchboardError, accountConfigPath } from "../../src/index.js";
import { apiSignal } from "./api-signal.js";
import type { PollBackoff } from "./poll-updates.js";
import type { TelegramAccount } from "./telegram-accounts.js";
import { describeTelegramError } from "./telegram-errors.js";

/** Whether Telegram told who the bot is yet, and why not (AccountHealth without `sendOnly`). */
export type BotHealth = () => { connected: boolean; lastError?: string };

/** The bot's identity (getMe): asked until Telegram answers; a rejected token is a config error. */
export interface BotIdentity {
  /** getMe unless known: true once known, false (logged) while Telegram is away; throws only for a rejected token */
  ask(signal?: AbortSignal): Promise<boolean>;
  health: BotHealth;
}

/**
 * `what` names the account's state while Telegram is away in `health` (e.g. "send-only, Telegram
 * not reached yet (sends are retried)"). A 401 or 404 (the token) throws CONFIG_INVALID with what to
 * do; anything else (5xx, no connection) is logged and remembered until the next ask.
 */
export function botIdentity(bot: Bot, account: TelegramAccount, logger: Logger, what: string): BotIdentity {
  let lastError = "Telegram not asked who the bot is yet";
  return {
    async ask(signal) {
      if (bot.isInited()) return true;
      try {
        bot.botInfo = await bot.api.getMe(signal && apiSignal(signal));
      } catch (err) {
        if (err instanceof GrammyError && (err.error_code === 401 || err.error_code === 404))
          throw new SwitchboardError(
            ErrorCodes.CONFIG_INVALID,
            `Telegram rejected the bot token of ${accountConfigPath("telegram", account.accountId)} (${err.error_code} ${err.description}). Copy the token from @BotFather again.`,
          );
        lastError = `${what}: ${describeTelegramError(err)}`;
        logger.warn(
          { accountId: account.accountId, err: describeTelegramError(err) },
          "telegram getMe failed; will retry",
        );
      }
      return bot.isInited();
    },
    health: () => (bot.isInited() ? { connected: true } : { connected: false, lastError }),
  };
}

/**
 * Runs `attempt` until it answers true, with the poll backoff between tries (from `minMs`, times
 * 1.8 per failure, up to `maxMs`, with 25% jitter); false when aborted first. A throw ends it.
 */
export async function retriedOrAborted(
  attempt: () => Promise<boolean>,
  backoff: PollBackoff,
  signal: AbortSignal,
): Promise<boolean> {
  for (let failures = 0; !signal.aborted; failures++) {
    if (await attempt()) return true;
    const delay = Math.min(backoff.maxMs, backoff.minMs * 1.8 ** failures) * (0.75 + Math.random() * 0.5);
    if (!(await sleep(delay, true, { signal }).catch(() => false))) return false;
  }
  return false;
}
