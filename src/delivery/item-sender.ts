import type { Logger } from "../logger.js";
import type { ChannelAdapter } from "./channel-adapter.js";
import { classifySendError } from "./classify-send-error.js";
import type { DeliveryFailure, OutboxItem } from "./outbox-item.js";
import type { Outbox } from "./outbox.js";
import { type RetryOptions, retryDelay } from "./retry-delay.js";

/** Dependencies of {@link createItemSender}. */
export interface ItemSenderDeps {
  adapters: (channel: string) => ChannelAdapter | undefined;
  outbox: Outbox;
  logger: Logger;
  now: () => number;
  /** the retry setting of the account an item's target is sent from */
  retry: (target: OutboxItem["target"]) => RetryOptions;
  random?: (() => number) | undefined;
  /** told each message's outcome (metrics); default none */
  observe?: DeliveryObserver | undefined;
}

/** What became of an outbound message: sent, one failed attempt to retry, failed for good, or blocked by sendPolicy. */
export type DeliveryObserver = (
  target: OutboxItem["target"],
  result: "sent" | "retried" | "failed" | "blocked",
  reason?: string,
) => void;

/** The log fields that identify an outbox item. */
export function outboxLogFields(item: OutboxItem) {
  return {
    sessionKey: item.sessionKey,
    id: item.id,
    kind: item.kind,
    channel: item.target.channel,
    to: item.target.to,
  };
}

/**
 * Sends the unsent chunks of one pending outbox item and records the outcome: that a chunk's send
 * started, each delivered chunk with its platform ids, then delivered; or a retry time with
 * backoff; or the final failure (logged as a warning).
 */
export function createItemSender(
  deps: ItemSenderDeps,
): (item: OutboxItem, after?: Promise<unknown>) => Promise<OutboxItem> {
  const { outbox, logger, now, retry } = deps;

  async function fail(item: OutboxItem, error: DeliveryFailure, err?: unknown): Promise<OutboxItem> {
    const failed = await outbox.update(item.id, {
      status: "failed",
      attempts: item.attempts + 1,
      lastError: error,
      sending: undefined,
    });
    logger.warn(
      {
        ...outboxLogFields(item),
        attempts: failed.attempts,
        reason: error.reason,
        // a send that threw logs its error; a target that cannot be sent to has only the reason
        ...(err === undefined ? { detail: error.message } : { err }),
      },
      "delivery failed",
    );
    deps.observe?.(item.target, "failed", error.reason);
    return failed;
  }

  /**
   * A failed send: a final refusal ends the item at once; a retryable one (network, 5xx, 429) keeps
   * it and retries with backoff until `maxAgeMs` after it was handed over (the last try falls on
   * that deadline), or the optional `attempts` cap.
   */
  async function onSendError(item: OutboxItem, err: unknown): Promise<OutboxItem> {
    const { retryable, retryAfterMs, ...error } = classifySendError(err);
    const attempts = item.attempts + 1;
    const options = retry(item.target);
    if (!retryable) return fail(item, error, err);
    const deadline = item.createdAt + options.maxAgeMs;
    const outOfAttempts = options.attempts !== undefined && attempts >= options.attempts;
    if (outOfAttempts || now() >= deadline) {
      const minutes = Math.round((now() - item.createdAt) / 60_000);
      const message = `${error.message} (gave up after ${attempts} attempts over ${minutes} min)`;
      return fail(item, { reason: error.reason, message }, err);
    }
    const nextAttemptAt = Math.min(now() + retryDelay(attempts, options, retryAfterMs, deps.random), deadline);
    logger.info(
      { ...outboxLogFields(item), attempts, retryInMs: nextAttemptAt - now(), reason: error.reason, err },
      "delivery failed; will retry",
    );
    deps.observe?.(item.target, "retried", error.reason);
    return outbox.update(item.id, { attempts, nextAttemptAt, lastError: error, sending: undefined });
  }

  return async function sendItem(item: OutboxItem, after?: Promise<unknown>): Promise<OutboxItem> {
    const { channel, to } = item.target;
    const adapter = deps.adapters(channel);
    if (!adapter) {
      return fail(item, {
        reason: "no_adapter",
        message: `No adapter for channel "${channel}" is running. Enable the channel in the config, or deliver to another channel.`,
      });
    }
    if (!to)
      return fail(item, {
        reason: "no_recipient",
        message: `The target on "${channel}" has no recipient ("to"). Pass the chat id to deliver to.`,
      });
    let current = item;
    while (current.sent < current.chunks.length) {
      const index = current.sent;
      const replyTo = current.replyToMessageId;
      const part = { index, count: current.chunks.length };
      // A marker on this chunk that no sender of this process holds: an earlier process started this
      // send and died before recording its outcome.
      const interrupted = current.sending?.index === index ? current.sending : undefined;
      // On disk before the platform is called, so a crash during the send is known after the restart;
      // and claimed, so no other sender sends this chunk while this one does.
      const claimed = await outbox.claim(current.id, index, now());
      if (!claimed) {
        logger.debug(
          { ...outboxLogFields(current), chunk: index },
          "chunk already claimed by another send; left to it",
        );
        return outbox.get(current.id) ?? current;
      }
      if (interrupted) {
        const fields = { ...outboxLogFields(current), chunk: index, startedAt: interrupted.at };
        if (adapter.capabilities.deduplicatesSends)
          logger.info(fields, "resending a chunk a crash interrupted; the platform drops it if it arrived");
        else
          logger.warn(
            fields,
            "resending a chunk a crash interrupted; it may arrive twice (this platform cannot deduplicate)",
          );
      }
      current = claimed;
      if (after) {
        // The caller's own earlier writes (a turn's start) are durable by now (earlier in the same journal) unless they failed.
        const stored = await after.then(
          () => true,
          () => false,
        );
        if (!stored)
          return fail(current, {
            reason: "not_stored",
            message: "What produced this message could not be stored, so it was not sent.",
          });
      }
      let sent: { messageIds: string[] };
      try {
        sent = await adapter.send(current.target, {
          text: current.chunks[index]!,
          part,
          idempotencyKey: `${current.id}#${index}`,
          kind: current.kind,
          ...(replyTo !== undefined && { replyToMessageId: replyTo }),
        });
      } catch (err) {
        return onSendError(current, err);
      }
      // Recorded before the next chunk goes, so a retry or a restart never sends a recorded chunk
      // again; the last chunk's record also finishes the item (one write, not two).
      const last = index + 1 === current.chunks.length;
      current = await outbox.update(current.id, {
        sent: index + 1,
        sending: undefined,
        messageIds: [...current.messageIds, ...sent.messageIds],
        ...(last && { status: "delivered" as const, deliveredAt: now() }),
      });
    }
    if (current.status !== "delivered")
      current = await outbox.update(current.id, { status: "delivered", deliveredAt: now() });
    logger.debug({ ...outboxLogFields(current), messageIds: current.messageIds }, "delivered");
    deps.observe?.(current.target, "sent");
    return current;
  };
}
