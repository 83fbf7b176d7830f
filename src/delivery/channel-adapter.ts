import type { IncomingMessage, ServerResponse } from "node:http";
import type { InboundMessage } from "../routing/inbound-message.js";
import type { DeliveryContext } from "../sessions/session-entry.js";

/**
 * The gateway's own clients (terminal and web chat). Replies to them travel as run events and
 * method results; only unsolicited messages (announces, notices) are delivered to this channel.
 */
export const CLIENT_CHANNEL = "webchat";

/** What leaves for a channel: one piece of text (already within the adapter's limit). */
export interface OutboundMessage {
  text: string;
  /** the platform message this answers, for quoting */
  replyToMessageId?: string;
  /** which piece of a chunked message this is (0-based), so `replyToMode: "first"` quotes only the first */
  part?: { index: number; count: number };
  /**
   * The same for every attempt at this piece (`<outbox id>#<index>`): an adapter whose platform
   * drops repeats (Discord's nonce, a client-chosen WhatsApp message id) passes it on.
   */
  idempotencyKey?: string;
}

/**
 * Where an adapter hands inbound messages to the core. It resolves once the message is stored
 * durably (its turn may still be running); only then may the adapter acknowledge it to the platform
 * (advance the polling offset, answer the webhook 200, send the receipt). It rejects when the
 * message could not be stored: the adapter must then leave it unacknowledged so it comes again.
 */
export type InboundSink = (message: InboundMessage) => Promise<void>;

/**
 * A platform connection. Adapters turn platform events into {@link InboundMessage}s and send
 * text; they decide nothing about policy, owners, commands or session keys.
 */
export interface ChannelAdapter {
  /** the channel name used in keys and targets, e.g. "telegram" */
  readonly id: string;
  readonly limits: {
    /** longest text one `send` accepts; the delivery gate chunks to it */
    maxTextLength: number;
  };
  /**
   * True when the platform drops a repeated send with the same {@link OutboundMessage.idempotencyKey}:
   * a piece resent after a crash during its send then arrives exactly once. Otherwise (Telegram)
   * that piece is resent once and may arrive twice: delivery is at least once.
   */
  readonly deduplicatesSends?: boolean;
  start(sink: InboundSink): Promise<void>;
  stop(): Promise<void>;
  /** Sends one message; throws {@link DeliveryError} when the platform refuses. */
  send(target: DeliveryContext, message: OutboundMessage): Promise<{ messageIds: string[] }>;
  /** Optional: show or clear a typing indicator while a run is in progress. */
  typing?(target: DeliveryContext): Promise<void>;
  /** Optional: who the bot is on this account, so `/cmd@ThisBot` and `@bot /cmd` are recognised as ours. */
  identity?(accountId: string): BotIdentity | undefined;
  /** Optional: serves a platform webhook on the gateway's port; false when the request is not for it. */
  handleHttp?(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
}

/** How people address the bot on its platform. */
export interface BotIdentity {
  /** Telegram `@username` (with or without the `@`) */
  botUsername?: string;
  /** Discord user id, mentioned as `<@id>` */
  botId?: string;
  /** WhatsApp number, mentioned as `@<digits>` */
  botNumber?: string;
}

/** A platform refused or failed a send; `retryable` says whether trying again can help. */
export class DeliveryError extends Error {
  readonly retryable: boolean;
  /** the platform asked to wait this long (e.g. Telegram 429 retry_after) */
  readonly retryAfterMs: number | undefined;
  /** a short stable reason, e.g. "chat_not_found", "blocked", "rate_limited", "network" */
  readonly reason: string;

  constructor(message: string, options: { retryable: boolean; reason: string; retryAfterMs?: number }) {
    super(message);
    this.name = "DeliveryError";
    this.retryable = options.retryable;
    this.reason = options.reason;
    this.retryAfterMs = options.retryAfterMs;
  }
}
