import type { Logger } from "../logger.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import { openJsonRecord } from "../sessions/atomic-json-file.js";
import { WriteCoalescer } from "../sessions/write-coalescer.js";

/** `channel:account:chat:messageId`, or undefined when the platform gave no message id. */
export function inboundDedupeKey(message: InboundMessage): string | undefined {
  if (!message.messageId) return undefined;
  return [message.channel, message.accountId, message.chat.id, message.messageId].join(":");
}

/** Dependencies of {@link createInboundDedupe}. */
export interface InboundDedupeDeps {
  /** e.g. `$SWITCHBOARD_HOME/state/inbound-dedupe.json` */
  path: string;
  logger: Logger;
  now?: () => number;
  /** default: 7 days */
  retentionMs?: number;
  /** default: 50,000 keys */
  maxKeys?: number;
}

/**
 * Remembers accepted inbound messages on disk, so a replay (polling overlap, a restart, a
 * platform redelivery) is recognised and ignored. A claim settles once it is on disk.
 */
export async function createInboundDedupe(deps: InboundDedupeDeps) {
  const now = deps.now ?? Date.now;
  const retentionMs = deps.retentionMs ?? 7 * 24 * 3_600_000;
  const maxKeys = deps.maxKeys ?? 50_000;
  const { db } = await openJsonRecord(deps.path, { logger: deps.logger, now, what: "inbound dedupe file" });
  const writes = new WriteCoalescer(() => db.write());

  function prune(): void {
    const cutoff = now() - retentionMs;
    const keys = Object.keys(db.data);
    for (const key of keys) if (typeof db.data[key] !== "number" || (db.data[key] as number) < cutoff) delete db.data[key];
    const excess = Object.keys(db.data).length - maxKeys;
    if (excess > 0) for (const key of Object.keys(db.data).slice(0, excess)) delete db.data[key];
  }

  // Expired keys go at open and then at most hourly, so the file stays small without a timer.
  prune();
  let prunedAt = now();

  return {
    /** True (and remembered) the first time `key` is seen; false for a replay. */
    async claim(key: string): Promise<boolean> {
      if (db.data[key] !== undefined && (db.data[key] as number) >= now() - retentionMs) return false;
      db.data[key] = now();
      if (now() - prunedAt >= Math.min(retentionMs, 3_600_000) || Object.keys(db.data).length > maxKeys) {
        prune();
        prunedAt = now();
      }
      await writes.request();
      return true;
    },
    /** Drops expired keys and writes the file. */
    async compact(): Promise<void> {
      prune();
      await writes.request();
    },
    flush: () => writes.idle(),
  };
}

/** The inbound dedupe set. */
export type InboundDedupe = Awaited<ReturnType<typeof createInboundDedupe>>;
