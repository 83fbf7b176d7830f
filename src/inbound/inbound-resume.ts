import { ErrorCodes, SwitchboardError } from "../errors.js";
import { type InboundMessage, InboundMessageSchema } from "../routing/inbound-message.js";
import type { PendingInbound } from "./inbox.js";
import { commandReplyKey } from "./inbound-act.js";
import { handleStored } from "./inbound-handle.js";
import type { InboundResult } from "./inbound-types.js";
import type { Pipeline } from "./inbound-wiring.js";
import { isStoredTurn, resumeStoredTurn, retryStoredTurn } from "./resume-stored-turn.js";

/** True when a stored entry a restart interrupted must not run again: already answered, or a native command. */
function notReplayed(p: Pipeline, entry: PendingInbound, message: InboundMessage): boolean {
  const { handedOver } = p.deps;
  if (handedOver?.(`${entry.runId}:reply`) || handedOver?.(commandReplyKey(entry))) return true;
  if (!entry.interactive) return false;
  // Its answer could only go through the interaction, which ended with the old process.
  p.logger.warn(
    { id: entry.id, command: message.command?.name },
    "a native command a restart interrupted is not replayed; its sender may run it again",
  );
  return true;
}

/** Replays one interrupted entry, or finishes it without a turn; true when it was replayed. */
async function resumeOne(p: Pipeline, entry: PendingInbound): Promise<boolean> {
  if (isStoredTurn(entry)) return resumeStoredTurn(p, entry);
  const parsed = InboundMessageSchema.safeParse(entry.message);
  if (!parsed.success) {
    p.logger.error({ id: entry.id, err: parsed.error }, "stored inbound message is unreadable; dropped");
    await p.finish.dropped(entry);
    return false;
  }
  if (notReplayed(p, entry, parsed.data)) {
    await p.finish.dropped(entry);
    return false;
  }
  if (p.guard.exhausted(entry)) {
    await p.guard.setAside(entry, parsed.data);
    return false;
  }
  p.logger.info(
    { id: entry.id, runId: entry.runId, receivedAt: entry.receivedAt },
    "replaying an inbound message a restart interrupted",
  );
  await handleStored(p, entry, parsed.data, true).catch(() => undefined); // logged in handleStored
  return true;
}

/**
 * Replays the messages a restart interrupted, oldest first, before new traffic: a turn whose
 * reply already reached the outbox is only marked done; any other is run again (same run id).
 */
export async function resumePending(p: Pipeline): Promise<number> {
  let replayed = 0;
  for (const entry of p.deps.inbox.pending()) if (await resumeOne(p, entry)) replayed++;
  return replayed;
}

/** What retrying a set-aside entry started: a message's result, or a stored turn queued again. */
type RetryResult = InboundResult | Awaited<ReturnType<typeof retryStoredTurn>>;

/** Runs a set-aside message again (its starts counted afresh); undefined when no such entry is set aside. */
export async function retrySetAside(p: Pipeline, id: string): Promise<RetryResult | undefined> {
  const entry = await p.deps.inbox.retry(id);
  if (!entry) return undefined;
  if (isStoredTurn(entry)) return retryStoredTurn(p, entry);
  const parsed = InboundMessageSchema.safeParse(entry.message);
  if (!parsed.success) {
    await p.finish.dropped(entry);
    throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, `inbox entry ${id} is unreadable; it was dropped`);
  }
  return handleStored(p, entry, parsed.data, true);
}
