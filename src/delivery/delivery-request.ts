import type { ParsedSessionKey } from "../routing/session-key.js";
import type { DeliveryContext, SessionEntry } from "../sessions/session-entry.js";
import type { DeliveryFailure, OutboundKind, OutboxItem } from "./outbox-item.js";

/** One outbound message handed to the delivery gate. */
export interface DeliveryRequest {
  /** the session the message comes from; its policy applies */
  sessionKey: ParsedSessionKey;
  /** the session's row, for its `/send` override and channel facts */
  entry?: SessionEntry | undefined;
  target: DeliveryContext;
  text: string;
  kind: OutboundKind;
  /** the same key twice sends once, e.g. `announce:<runId>` or `reply:<inbound messageId>` */
  idempotencyKey: string;
  /** the reply to an owner's own command: delivered even where sendPolicy denies */
  bypassPolicy?: boolean;
  replyToMessageId?: string | undefined;
  /**
   * Writes of the caller's that must be durable before anything is sent (a turn's start). Checked
   * after each chunk's claim (also by a later send from the retry pump), so the item, the first
   * claim and these writes share one sync; if it rejects, nothing is sent and the item is marked
   * failed ("not_stored"). Kept in memory only: a resend after a restart does not wait for it.
   */
  after?: Promise<unknown>;
}

/** The delivery gate's entry point, as every caller takes it in its deps. */
export type Deliver = (request: DeliveryRequest) => Promise<DeliveryResult>;

/** What became of a {@link DeliveryRequest}. */
export interface DeliveryResult {
  /** queued: accepted and retried in the background; denied: blocked by sendPolicy, nothing queued */
  status: "delivered" | "queued" | "denied" | "failed";
  /** platform ids of the chunks delivered so far */
  messageIds: string[];
  /** the last failure, for queued and failed results */
  error?: DeliveryFailure;
}

/** The result a request gets for the outbox item that carries it. */
export function deliveryResultOf(item: OutboxItem): DeliveryResult {
  if (item.status === "delivered") return { status: "delivered", messageIds: item.messageIds };
  return {
    status: item.status === "failed" ? "failed" : "queued",
    messageIds: item.messageIds,
    ...(item.lastError && { error: item.lastError }),
  };
}
