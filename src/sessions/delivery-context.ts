import type { DeliveryContext, SessionEntry, SessionEntryPatch } from "./session-entry.js";

/** Loosely typed delivery fields as they arrive from callers or old stores. */
export interface DeliveryContextInput {
  channel?: string | undefined;
  to?: string | undefined;
  accountId?: string | undefined;
  threadId?: string | number | undefined;
}

function text(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/** Trims every field, lowercases the channel, drops empty ones; undefined without a channel. */
export function normalizeDeliveryContext(input: DeliveryContextInput | undefined): DeliveryContext | undefined {
  const channel = text(input?.channel)?.toLowerCase();
  if (!channel) return undefined;
  const to = text(input?.to);
  const accountId = text(input?.accountId);
  const rawThread = input?.threadId;
  const threadId =
    typeof rawThread === "number" ? (Number.isFinite(rawThread) ? Math.trunc(rawThread) : undefined) : text(rawThread);
  return { channel, ...(to && { to }), ...(accountId && { accountId }), ...(threadId !== undefined && { threadId }) };
}

/** `channel|to|account|thread`, for de-duplication; undefined without channel and to. */
export function deliveryContextKey(context: DeliveryContext | undefined): string | undefined {
  if (!context?.channel || !context.to) return undefined;
  return [context.channel, context.to, context.accountId ?? "", context.threadId ?? ""].join("|");
}

/**
 * The entry fields for a new last route. The route replaces the old one as a whole: a message
 * without a thread clears the thread (no sticky topic); the legacy `last*` mirrors follow.
 */
export function lastRoutePatch(route: DeliveryContextInput): SessionEntryPatch {
  const context = normalizeDeliveryContext(route);
  return {
    deliveryContext: context,
    lastChannel: context?.channel,
    lastTo: context?.to,
    lastAccountId: context?.accountId,
    lastThreadId: context?.threadId,
  };
}

/** The entry's delivery context, reading the legacy `last*` mirrors when the context is missing. */
export function entryDeliveryContext(entry: SessionEntry | undefined): DeliveryContext | undefined {
  if (!entry) return undefined;
  return (
    normalizeDeliveryContext(entry.deliveryContext) ??
    normalizeDeliveryContext({
      channel: entry.lastChannel,
      to: entry.lastTo,
      accountId: entry.lastAccountId,
      threadId: entry.lastThreadId,
    })
  );
}
