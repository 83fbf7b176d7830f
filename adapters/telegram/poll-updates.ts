import { setTimeout as sleep } from "node:timers/promises";
import { type Api, GrammyError, HttpError } from "grammy";
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
  /**
   * Hands one update on; resolves once the core stored it, rejects when it did not (it is fetched
   * again). Called for every update of a batch in ascending order before any is awaited: each call
   * must start storing its update before it returns its promise, so the batch is stored in that
   * order, with one sync, and handled in that order.
   */
  handle: (update: Update) => Promise<void>;
  signal: AbortSignal;
  logger: Logger;
  backoff?: PollBackoff;
  /** asked before each getUpdates (`AdapterStartContext.mayAct`): false stops polling; a throw backs off */
  mayPoll?: () => Promise<boolean>;
}

/** 2 s to 30 s (also between getMe tries while Telegram is away at start) */
export const DEFAULT_BACKOFF: PollBackoff = { minMs: 2_000, maxMs: 30_000 };

/** Sleeps unless aborted; false when aborted. */
async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  // The only rejection is the abort: the caller stops, which it logs.
  return sleep(ms, true, { signal }).catch(() => false);
}

/** What became of a batch: the last update of its longest stored prefix, and the first not stored. */
interface StoredBatch {
  lastStored?: number;
  refused?: { updateId: number; err: unknown };
}

/**
 * Hands every update on at once (in ascending order) and waits until each is stored or refused.
 * Only the prefix before the first refusal counts as stored: Telegram hands the rest over again,
 * and the core's inbox recognises those it did store.
 */
async function storeBatch(updates: readonly Update[], handle: PollOptions["handle"]): Promise<StoredBatch> {
  const results = await Promise.allSettled(updates.map((update) => handle(update)));
  let lastStored: number | undefined;
  for (const [i, result] of results.entries()) {
    const updateId = updates[i]!.update_id;
    if (result.status === "rejected")
      return { ...(lastStored !== undefined && { lastStored }), refused: { updateId, err: result.reason } };
    lastStored = updateId;
  }
  return lastStored === undefined ? {} : { lastStored };
}

/** How long to wait before the next getUpdates: Telegram's retry_after when it names one, else backoff with jitter. */
function retryDelay(err: unknown, backoff: PollBackoff, failures: { count: number }): number {
  const retryAfter = err instanceof GrammyError ? err.parameters.retry_after : undefined;
  if (retryAfter !== undefined) return retryAfter * 1000;
  return Math.min(backoff.maxMs, backoff.minMs * 1.8 ** failures.count++) * (0.75 + Math.random() * 0.5);
}

/** Failed polls in a row, and whether the first one since the last good poll was already retried at once. */
interface Failures {
  count: number;
  retriedAtOnce: boolean;
}

/**
 * A keep-alive connection the server closed while it sat idle fails the first request sent on it
 * (ECONNRESET): that is no outage, so the first network error after a good poll is retried at once,
 * on a new connection, instead of stalling intake for the backoff.
 */
function retryAtOnce(err: unknown, failures: Failures): boolean {
  if (!(err instanceof HttpError) || failures.count > 0 || failures.retriedAtOnce) return false;
  failures.retriedAtOnce = true;
  return true;
}

/**
 * What a failed getUpdates leads to: false when polling must stop (aborted, or the token was
 * rejected), true to poll again (at once after an idle connection's reset, else after the backoff).
 */
async function failedPoll(options: PollOptions, err: unknown, failures: Failures): Promise<boolean> {
  const { accountId, signal, logger } = options;
  if (signal.aborted) return false;
  if (err instanceof GrammyError && err.error_code === 401) {
    logger.error({ accountId, err: describeTelegramError(err) }, "telegram rejected the bot token; polling stopped");
    return false;
  }
  if (retryAtOnce(err, failures)) {
    logger.debug({ accountId, err: describeTelegramError(err) }, "telegram getUpdates failed; retrying at once");
    return true;
  }
  const delay = retryDelay(err, options.backoff ?? DEFAULT_BACKOFF, failures);
  const hint =
    err instanceof GrammyError && err.error_code === 409
      ? "another process polls this bot, or a webhook is set"
      : undefined;
  logger.warn(
    { accountId, err: describeTelegramError(err), retryInMs: Math.round(delay), ...(hint && { hint }) },
    "telegram getUpdates failed",
  );
  return pause(delay, signal);
}

/** The next batch of updates after `offset`, or undefined when polling must stop (aborted, or the token was rejected). */
async function fetchBatch(
  options: PollOptions,
  offset: number | undefined,
  failures: Failures,
): Promise<Update[] | undefined> {
  const { api, signal } = options;
  while (!signal.aborted) {
    try {
      // A paused ex-owner that continues must not poll beside the gateway that took the bot over.
      if (options.mayPoll && !(await options.mayPoll())) return undefined;
      const updates = await api.getUpdates(
        { ...(offset !== undefined && { offset }), timeout: options.timeoutSeconds, allowed_updates: ["message"] },
        apiSignal(signal),
      );
      failures.count = 0;
      failures.retriedAtOnce = false;
      return updates;
    } catch (err) {
      if (!(await failedPoll(options, err, failures))) return undefined;
    }
  }
  return undefined;
}

/**
 * Long polling until `signal` aborts: asks for updates after the last one stored, hands each batch
 * on at once in ascending order (an update at or below the offset is skipped, whatever order a
 * server answers in), and moves the offset past the batch only once the core has stored it: the
 * next getUpdates (which tells Telegram) asks after it, and its id is recorded on disk so a restart
 * never replays it. A crash never skips an update the core has not stored. 429 waits
 * `retry_after`; network errors, 5xx and 409 (another poller or a webhook) back off; 401 stops. The
 * first network error after a good poll is retried at once (a keep-alive connection closed while idle).
 */
export async function pollUpdates(options: PollOptions): Promise<void> {
  const { botId, accountId, offsets, signal, logger } = options;
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const last = await offsets.read(botId);
  let offset = last === undefined ? undefined : last + 1;
  const failures: Failures = { count: 0, retriedAtOnce: false };
  // One offset write per batch, overlapping the next poll; each follows the one before, so the file never goes back.
  let recorded = Promise.resolve();
  logger.info({ accountId, offset }, "telegram polling started");
  for (;;) {
    const updates = await fetchBatch(options, offset, failures);
    if (!updates) break;
    const fresh = [...updates]
      .sort((a, b) => a.update_id - b.update_id)
      .filter((update) => offset === undefined || update.update_id >= offset);
    if (fresh.length === 0) continue;
    const { lastStored, refused } = await storeBatch(fresh, options.handle);
    if (lastStored !== undefined) {
      offset = lastStored + 1;
      recorded = recorded.then(() =>
        offsets.write(botId, lastStored).catch((err: unknown) => {
          // The update is stored; losing the offset only risks a repeat, which the core's inbox recognises.
          logger.error({ accountId, updateId: lastStored, err }, "telegram offset not saved");
        }),
      );
    }
    if (refused) {
      // Not stored: the offset stays before it, so the next getUpdates hands it over again.
      const delay = Math.min(backoff.maxMs, backoff.minMs * 1.8 ** failures.count++);
      logger.warn(
        { accountId, updateId: refused.updateId, err: refused.err, retryInMs: Math.round(delay) },
        "telegram update not stored; fetching it again",
      );
      await pause(delay, signal);
    }
  }
  await recorded;
  logger.info({ accountId }, "telegram polling stopped");
}
