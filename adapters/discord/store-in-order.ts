// How one Discord message is handed to the core, live or replayed alike: Discord never sends a
// message twice on the same connection, so a store that fails is tried again here, in order (later
// messages wait behind it), and only a message that is never stored keeps the stored session before
// it (./gateway-session.ts), for a bounded time: the next holder's RESUME then gives it back.
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../../src/index.js";

/** How long a message never stored holds the stored session before it: whichever comes first. */
export interface FreezeBound {
  /** messages handled after it */
  messages: number;
  ms: number;
}

/** How the account stores its messages: the tries of one message, and the freeze after them. */
export interface SessionLimits {
  /** the waits before each new try of a message the core could not store */
  retriesMs: readonly number[];
  freeze: FreezeBound;
}

/**
 * 6 tries over 7.75 s (a PostgreSQL failover, a lock held a moment); then the row stays before the
 * message for 1,000 messages or 10 minutes: a restart in that time replays it, and what it replays
 * again stays well inside the inbox's dedupe memory (50,000 keys, 7 days), so nothing is answered twice.
 */
export const SESSION_LIMITS: SessionLimits = {
  retriesMs: [250, 500, 1_000, 2_000, 4_000],
  freeze: { messages: 1_000, ms: 10 * 60_000 },
};

/** Where an account's freeze reports: its log, and the gateway's count of messages lost (AdapterStartContext.inboundLost). */
export interface FreezeLog {
  logger: Logger;
  accountId: string;
  /** counts messages given up for good (absent: a gateway without metrics) */
  countLost?: ((count: number) => void) | undefined;
}

/** The stored session's freeze: from a message never stored until `bound`, then that message is logged and counted as lost. */
export function sessionFreeze(bound: FreezeBound, log: FreezeLog, now: () => number) {
  let frozen: { since: number; handled: number; lost: number; messageIds: string[] } | undefined;
  return {
    /** A message never stored: the row stays before it (before the first, while one freeze lasts). */
    lost(messageId?: string): void {
      frozen ??= { since: now(), handled: 0, lost: 0, messageIds: [] };
      frozen.lost++;
      if (messageId !== undefined && frozen.messageIds.length < 20) frozen.messageIds.push(messageId);
      log.logger.error(
        { accountId: log.accountId, messageId, freeze: bound },
        "discord message not stored: the stored session stays before it, so a restart within the bound replays it",
      );
    },
    /** A message handled after it, counted toward the bound. */
    handled(): void {
      if (frozen) frozen.handled++;
    },
    /** True when the row may be written: no freeze, or one past its bound (ended here, its messages logged and counted as lost). */
    thawed(): boolean {
      if (!frozen) return true;
      const waitedMs = now() - frozen.since;
      if (frozen.handled < bound.messages && waitedMs < bound.ms) return false;
      log.logger.error(
        {
          accountId: log.accountId,
          messageIds: frozen.messageIds,
          lost: frozen.lost,
          handled: frozen.handled,
          waitedMs,
        },
        "discord message lost: never stored, and the stored session moves past it now (only a restart within the bound would have replayed it)",
      );
      log.countLost?.(frozen.lost);
      frozen = undefined;
      return true;
    },
  };
}

/**
 * Returns what hands one message to `handle` (true: stored, or ignored) and keeps the row: tried
 * again after each of `retriesMs` until stored, unless `stopping` is aborted (the core refuses new
 * messages then, and the next holder resumes before this one); then the row moves past `seq` (a live
 * message; a replayed one has none), or stays before the message (`keeper.lost`), also when `handle` throws.
 */
export function storeInOrder(
  keeper: { lost(messageId?: string): void; handled(seq: number): void },
  handle: (data: unknown) => Promise<boolean>,
  retry: { retriesMs: readonly number[]; stopping: AbortSignal },
): (data: unknown, seq?: number) => Promise<void> {
  return async (data, seq) => {
    let done = false;
    try {
      done = await handle(data);
      for (const wait of retry.retriesMs) {
        if (done || retry.stopping.aborted) break;
        await sleep(wait, undefined, { signal: retry.stopping }).catch(() => undefined);
        if (!retry.stopping.aborted) done = await handle(data);
      }
    } finally {
      if (!done) keeper.lost((data as { id?: string } | null)?.id);
      else if (seq !== undefined) keeper.handled(seq);
    }
  };
}
