import type { Logger } from "../logger.js";
import { DeliveryError } from "./channel-adapter.js";
import type { ChannelAdapter } from "./channel-adapter.js";
import { classifySendError } from "./classify-send-error.js";
import type { DeliveryFailure, OutboxItem } from "./outbox-item.js";
import { type Outbox, laneOf } from "./outbox.js";
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
  /** asked before every platform send: false sends nothing (a paused owner past its lease, src/cluster/send-guard.ts); default always */
  mayStillSend?: (() => Promise<boolean>) | undefined;
  /**
   * asked before every chunk: whether this gateway holds the chunk's lane, claimed in a fenced
   * commit (a PostgreSQL owner's lane claims, src/cluster/lane-claims.ts); default always
   */
  holdsLane?: ((lane: string, sessionKey: string) => Promise<boolean>) | undefined;
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

/** Records an item's final failure, logs it as a warning and tells the observer. */
async function fail(
  deps: ItemSenderDeps,
  item: OutboxItem,
  error: DeliveryFailure,
  err?: unknown,
): Promise<OutboxItem> {
  const failed = await deps.outbox.update(item.id, {
    status: "failed",
    attempts: item.attempts + 1,
    lastError: error,
    sending: undefined,
  });
  deps.logger.warn(
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
async function onSendError(deps: ItemSenderDeps, item: OutboxItem, err: unknown): Promise<OutboxItem> {
  const { now } = deps;
  const { retryable, retryAfterMs, ...error } = classifySendError(err);
  const attempts = item.attempts + 1;
  const options = deps.retry(item.target);
  if (!retryable) return fail(deps, item, error, err);
  const deadline = item.createdAt + options.maxAgeMs;
  const outOfAttempts = options.attempts !== undefined && attempts >= options.attempts;
  if (outOfAttempts || now() >= deadline) {
    const minutes = Math.round((now() - item.createdAt) / 60_000);
    const message = `${error.message} (gave up after ${attempts} attempts over ${minutes} min)`;
    return fail(deps, item, { reason: error.reason, message }, err);
  }
  const nextAttemptAt = Math.min(now() + retryDelay(attempts, options, retryAfterMs, deps.random), deadline);
  deps.logger.info(
    { ...outboxLogFields(item), attempts, retryInMs: nextAttemptAt - now(), reason: error.reason, err },
    "delivery failed; will retry",
  );
  deps.observe?.(item.target, "retried", error.reason);
  return deps.outbox.update(item.id, { attempts, nextAttemptAt, lastError: error, sending: undefined });
}

/** The send guard could not reach the database (src/cluster/send-guard.ts): the platform was never asked. */
const isLeaseUnconfirmed = (err: unknown) => err instanceof DeliveryError && err.reason === "lease_unconfirmed";

/**
 * The send guard could not confirm the lease (a database outage): nothing went out and the platform
 * did not fail, so the item waits the first retry delay and tries again, counting no attempt and
 * never failing for its age; an outage longer than the retry schedule loses no reply.
 */
async function waitForLease(
  deps: ItemSenderDeps,
  item: OutboxItem,
  err: unknown,
  held: { why: string; release: boolean; marker?: OutboxItem["sending"] } = {
    why: "this gateway cannot confirm its lease",
    release: true,
  },
): Promise<OutboxItem> {
  const nextAttemptAt = deps.now() + retryDelay(1, deps.retry(item.target), undefined, deps.random);
  deps.logger.info(
    { ...outboxLogFields(item), retryInMs: nextAttemptAt - deps.now(), ...(err !== undefined && { err }) },
    `send held: ${held.why}; will retry`,
  );
  // A chunk this sender claimed is released to the marker it found (an earlier process's keeps its warning).
  return deps.outbox.update(item.id, { nextAttemptAt, ...(held.release && { sending: held.marker }) });
}

/**
 * Undefined when this gateway holds the next chunk's lane (always, without lane claims). Else the
 * item waits, as for its lease, and is returned: before the chunk's claim left as it is; with
 * `claimed` (right before the platform call) its chunk released to the marker found before it.
 */
async function holdLane(
  deps: ItemSenderDeps,
  item: OutboxItem,
  claimed?: { marker: OutboxItem["sending"] },
): Promise<OutboxItem | undefined> {
  if (!deps.holdsLane) return undefined;
  const release = { release: claimed !== undefined, ...(claimed && { marker: claimed.marker }) };
  try {
    if (await deps.holdsLane(laneOf(item.target), item.sessionKey)) return undefined;
    return await waitForLease(deps, item, undefined, { why: "another gateway holds this chat's lane", ...release });
  } catch (err) {
    // A stale fence stops the gateway (its lease is lost); this write of the wait is refused too.
    return waitForLease(deps, item, err, { why: "this gateway could not claim this chat's lane", ...release });
  }
}

/** Why an item cannot be sent at all (no running adapter, or no recipient); undefined when it can. */
function unsendable(item: OutboxItem, adapter: ChannelAdapter | undefined): DeliveryFailure | undefined {
  const { channel, to } = item.target;
  if (!adapter)
    return {
      reason: "no_adapter",
      message: `No adapter for channel "${channel}" is running. Enable the channel in the config, or deliver to another channel.`,
    };
  if (!to)
    return {
      reason: "no_recipient",
      message: `The target on "${channel}" has no recipient ("to"). Pass the chat id to deliver to.`,
    };
  return undefined;
}

/**
 * Claims the item's next chunk; undefined when another sender of this process holds it. A chunk a
 * crash interrupted is resent, with a warning when the platform cannot drop the duplicate.
 */
async function claimChunk(deps: ItemSenderDeps, adapter: ChannelAdapter, current: OutboxItem) {
  const { logger } = deps;
  const index = current.sent;
  // A marker on this chunk that no sender of this process holds: an earlier process started this
  // send and died before recording its outcome.
  const interrupted = current.sending?.index === index ? current.sending : undefined;
  // On disk before the platform is called, so a crash during the send is known after the restart;
  // and claimed, so no other sender sends this chunk while this one does.
  const claimed = await deps.outbox.claim(current.id, index, deps.now());
  if (!claimed) {
    logger.debug({ ...outboxLogFields(current), chunk: index }, "chunk already claimed by another send; left to it");
    return undefined;
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
  return claimed;
}

/** The item's next chunk as the platform is given it, keyed by item and chunk. */
function chunkMessage(item: OutboxItem) {
  const index = item.sent;
  const replyTo = item.replyToMessageId;
  return {
    text: item.chunks[index]!,
    part: { index, count: item.chunks.length },
    idempotencyKey: `${item.id}#${index}`,
    kind: item.kind,
    ...(replyTo !== undefined && { replyToMessageId: replyTo }),
  };
}

/** A send (or its guard) that threw: the guard's outage waits, counting no attempt; anything else is a failed attempt. */
const sendFailed = (deps: ItemSenderDeps, item: OutboxItem, err: unknown) =>
  isLeaseUnconfirmed(err) ? waitForLease(deps, item, err) : onSendError(deps, item, err);

/**
 * Sends one claimed chunk and records it (`ok`), or records the failed send (not `ok`: the item
 * waits for its retry or has failed for good). `marker` is the chunk's marker found before this
 * sender claimed it (an earlier process's interrupted send), put back if the lane was lost.
 */
async function sendChunk(
  deps: ItemSenderDeps,
  adapter: ChannelAdapter,
  current: OutboxItem,
  marker: OutboxItem["sending"],
) {
  const index = current.sent;
  try {
    // Refused: the chunk stays claimed and unsent; the gateway stops and the next owner sends it.
    if (deps.mayStillSend && !(await deps.mayStillSend())) return { ok: false, item: current };
  } catch (err) {
    return { ok: false, item: await sendFailed(deps, current, err) };
  }
  // The lane again, right before the platform call (free while its claim is young): a lane lost
  // while the chunk was claimed or the turn's writes awaited sends nothing.
  const left = await holdLane(deps, current, { marker });
  if (left) return { ok: false, item: left };
  let sent: { messageIds: string[] };
  try {
    sent = await adapter.send(current.target, chunkMessage(current));
  } catch (err) {
    return { ok: false, item: await sendFailed(deps, current, err) };
  }
  // Recorded before the next chunk goes, so a retry or a restart never sends a recorded chunk
  // again; the last chunk's record also finishes the item (one write, not two).
  const last = index + 1 === current.chunks.length;
  const item = await deps.outbox.update(current.id, {
    sent: index + 1,
    sending: undefined,
    messageIds: [...current.messageIds, ...sent.messageIds],
    ...(last && { status: "delivered" as const, deliveredAt: deps.now() }),
  });
  return { ok: true, item };
}

/** Whether the caller's own earlier writes (a turn's start) were stored: durable by now (earlier in the same journal) unless they failed. */
const stored = (after: Promise<unknown>) =>
  after.then(
    () => true,
    () => false,
  );

/** Sends the unsent chunks of one item, one at a time; see {@link createItemSender}. */
async function sendItem(deps: ItemSenderDeps, item: OutboxItem, after?: Promise<unknown>): Promise<OutboxItem> {
  const adapter = deps.adapters(item.target.channel);
  const cannot = unsendable(item, adapter);
  if (cannot || !adapter) return fail(deps, item, cannot!);
  let current = item;
  while (current.sent < current.chunks.length) {
    // The lane first: a chunk of a lane another gateway took is left to it, unclaimed.
    const left = await holdLane(deps, current);
    if (left) return left;
    // The chunk's marker before this sender claims it: an earlier process's interrupted send.
    const marker = current.sending?.index === current.sent ? current.sending : undefined;
    const claimed = await claimChunk(deps, adapter, current);
    if (!claimed) return deps.outbox.get(current.id) ?? current;
    current = claimed;
    if (after && !(await stored(after)))
      return fail(deps, current, {
        reason: "not_stored",
        message: "What produced this message could not be stored, so it was not sent.",
      });
    const { ok, item: recorded } = await sendChunk(deps, adapter, current, marker);
    if (!ok) return recorded;
    current = recorded;
  }
  if (current.status !== "delivered")
    current = await deps.outbox.update(current.id, { status: "delivered", deliveredAt: deps.now() });
  deps.logger.debug({ ...outboxLogFields(current), messageIds: current.messageIds }, "delivered");
  deps.observe?.(current.target, "sent");
  return current;
}

/**
 * Sends the unsent chunks of one pending outbox item and records the outcome: that a chunk's send
 * started, each delivered chunk with its platform ids, then delivered; or a retry time with
 * backoff; or the final failure (logged as a warning).
 */
export function createItemSender(
  deps: ItemSenderDeps,
): (item: OutboxItem, after?: Promise<unknown>) => Promise<OutboxItem> {
  return (item, after) => sendItem(deps, item, after);
}
