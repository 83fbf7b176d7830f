import { setTimeout as sleep } from "node:timers/promises";
import { type Api, GrammyError } from "grammy";
import type { Update } from "grammy/types";
import type { Logger } from "../../src/index.js";
import { apiSignal } from "./api-signal.js";
import type { OffsetStore } from "./offset-store.js";
import { describeTelegramError } from "./telegram-errors.js";

/** Backoff between failed polls: from `minMs`, times 1.8 per failure, up to `maxMs`, with 25% jitter. */
export interface PollBackoff {
  minMs: number;
  maxMs: number;
}

/** What {@link pollUpdates} needs. */
export interface PollOptions {
  api: Api;
  botId: number;
  accountId: string;
  offsets: OffsetStore;
  /** seconds Telegram holds an empty getUpdates open */
  timeoutSeconds: number;
  /** hands one update on; resolves once the core stored it, rejects when it did not (it is fetched again) */
  handle: (update: Update) => Promise<void>;
  signal: AbortSignal;
  logger: Logger;
  backoff?: PollBackoff;
}

const DEFAULT_BACKOFF: PollBackoff = { minMs: 2_000, maxMs: 30_000 };

/** Sleeps unless aborted; false when aborted. */
async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  // The only rejection is the abort: the caller stops, which it logs.
  return sleep(ms, true, { signal }).catch(() => false);
}

/**
 * Long polling until `signal` aborts: asks for updates after the last one stored, hands them on in
 * ascending order (an update at or below the offset is skipped, whatever order a server answers in),
 * and records each one's id on disk once the core has stored it, so a restart never replays it and
 * a crash never skips one the core has not stored. 429 waits
 * `retry_after`; network errors, 5xx and 409 (another poller or a webhook) back off; 401 stops.
 */
export async function pollUpdates(options: PollOptions): Promise<void> {
  const { api, botId, accountId, offsets, signal, logger } = options;
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const last = await offsets.read(botId);
  let offset = last === undefined ? undefined : last + 1;
  let failures = 0;
  logger.info({ accountId, offset }, "telegram polling started");
  while (!signal.aborted) {
    let updates: Update[];
    try {
      updates = await api.getUpdates(
        { ...(offset !== undefined && { offset }), timeout: options.timeoutSeconds, allowed_updates: ["message"] },
        apiSignal(signal),
      );
      failures = 0;
    } catch (err) {
      if (signal.aborted) break;
      if (err instanceof GrammyError && err.error_code === 401) {
        logger.error(
          { accountId, err: describeTelegramError(err) },
          "telegram rejected the bot token; polling stopped",
        );
        return;
      }
      const retryAfter = err instanceof GrammyError ? err.parameters.retry_after : undefined;
      const delay =
        retryAfter !== undefined
          ? retryAfter * 1000
          : Math.min(backoff.maxMs, backoff.minMs * 1.8 ** failures++) * (0.75 + Math.random() * 0.5);
      const hint =
        err instanceof GrammyError && err.error_code === 409
          ? "another process polls this bot, or a webhook is set"
          : undefined;
      logger.warn(
        { accountId, err: describeTelegramError(err), retryInMs: Math.round(delay), ...(hint && { hint }) },
        "telegram getUpdates failed",
      );
      if (!(await pause(delay, signal))) break;
      continue;
    }
    for (const update of [...updates].sort((a, b) => a.update_id - b.update_id)) {
      if (offset !== undefined && update.update_id < offset) continue;
      try {
        await options.handle(update);
      } catch (err) {
        // Not stored: the offset stays before it, so the next getUpdates hands it over again.
        const delay = Math.min(backoff.maxMs, backoff.minMs * 1.8 ** failures++);
        logger.warn(
          { accountId, updateId: update.update_id, err, retryInMs: Math.round(delay) },
          "telegram update not stored; fetching it again",
        );
        await pause(delay, signal);
        break;
      }
      offset = update.update_id + 1;
      await offsets.write(botId, update.update_id).catch((err: unknown) => {
        // The update is stored; losing the offset only risks a repeat, which the core's inbox recognises.
        logger.error({ accountId, updateId: update.update_id, err }, "telegram offset not saved");
      });
    }
  }
  logger.info({ accountId }, "telegram polling stopped");
}
