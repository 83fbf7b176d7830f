// The owner's side of `chat.send` on a standby (./chat-send-handoff.ts, docs/scale-out.md "Inbound on
// any gateway"): a hand-off row of kind `chat-send` is taken in through the owner's own pipeline.
import { z } from "zod";
import { type HandoffRow, PoisonHandoffError } from "../cluster/handoff-sql.js";
import { handlingGoesOn } from "../inbound/handle-inbound.js";
import type { InboundOptions, InboundResult } from "../inbound/inbound-types.js";
import { InboundMessageSchema } from "../routing/inbound-message.js";

/** A stored `chat.send`: the message its handler built, and the session the client chose. */
const ChatSendRowSchema = z.object({ message: InboundMessageSchema, sessionKey: z.string().min(1) });

/** The payload of a `chat-send` hand-off row. */
export type ChatSendRow = z.infer<typeof ChatSendRowSchema>;

/**
 * The owner's intake of a stored `chat.send`: its own pipeline's `accept` (the inbox's dedupe and
 * store in one write), under the session the client chose and the run id the standby answered.
 * It stores at once: `accept` queues the inbox entry before its first await. Handling goes on
 * unawaited, as for an adapter's message; `handled` settles once each one taken in so far reached its
 * session's queue (its result: a queued turn is then on the lane, where a `chat.abort` finds it).
 */
export function chatSendHandoffIntake(
  accept: (message: unknown, options: InboundOptions) => Promise<{ result: Promise<InboundResult> }>,
) {
  const tracked = trackedHandling();
  const intake = async (row: HandoffRow): Promise<void> => {
    const parsed = ChatSendRowSchema.safeParse(row.payload);
    if (!parsed.success || !row.runId)
      throw new PoisonHandoffError(`not a chat.send: ${parsed.error?.issues[0]?.message ?? "no run id"}`);
    await tracked.accepted(accept(parsed.data.message, { sessionKey: parsed.data.sessionKey, runId: row.runId }));
  };
  const { handled } = tracked;
  return Object.assign(intake, { storesAtOnce: true, handled });
}

/**
 * The messages an intake took in whose handling has not reached the session's queue yet: `accepted`
 * tracks one from the call on (a pass's intakes are all called once it says `queued`) and lets its
 * handling go on; `handled` settles once every one tracked so far did.
 */
export function trackedHandling() {
  const handling = new Set<Promise<unknown>>();
  return {
    async accepted(accepted: Promise<{ result: Promise<InboundResult> }>): Promise<void> {
      const result = accepted.then((a) => a.result).catch(() => undefined);
      handling.add(result);
      void result.finally(() => handling.delete(result));
      handlingGoesOn(await accepted);
    },
    handled: async () => void (await Promise.all(handling)),
  };
}
