import { z } from "zod";
import { DeliveryContextSchema } from "../sessions/session-entry.js";

/** Why a delivery attempt failed, as kept for `/status` and the logs. */
const DeliveryFailureSchema = z.object({
  /** a short stable reason, e.g. "rate_limited", "chat_not_found", "no_adapter" */
  reason: z.string(),
  message: z.string(),
});
export type DeliveryFailure = z.infer<typeof DeliveryFailureSchema>;

/** What kind of message an outbox item carries. */
const OutboundKindSchema = z.enum(["reply", "announce", "notice"]);
export type OutboundKind = z.infer<typeof OutboundKindSchema>;

/** One outbound message in the durable outbox; its id is the caller's idempotency key. */
export const OutboxItemSchema = z.object({
  id: z.string().min(1),
  /** enqueue order, so messages to one target leave in the order they were handed over */
  seq: z.number().int().min(0),
  sessionKey: z.string(),
  target: DeliveryContextSchema,
  kind: OutboundKindSchema,
  /** the message split to the adapter's limit when it was enqueued; resent exactly as stored */
  chunks: z.array(z.string()).min(1),
  /** the platform message the first chunk answers */
  replyToMessageId: z.string().optional(),
  /** chunks already delivered; a retry resumes at `chunks[sent]` */
  sent: z.number().int().min(0),
  /**
   * Set (durably) just before `chunks[sent]` goes to the platform and cleared when its outcome is
   * recorded: still set after a restart means that chunk may have arrived without being recorded.
   */
  sending: z.object({ index: z.number().int().min(0), at: z.number() }).optional(),
  messageIds: z.array(z.string()),
  status: z.enum(["pending", "delivered", "failed"]),
  /** failed attempts so far */
  attempts: z.number().int().min(0),
  /** ms; when the next attempt is due (pending items only) */
  nextAttemptAt: z.number(),
  lastError: DeliveryFailureSchema.optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
  deliveredAt: z.number().optional(),
});
export type OutboxItem = z.infer<typeof OutboxItemSchema>;
