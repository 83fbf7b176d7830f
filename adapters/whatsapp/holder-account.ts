import { DeliveryError, type OutboundMessage } from "../../src/index.js";
import { SendAnswerSchema, WHATSAPP_SEND, WHATSAPP_TYPING } from "./holder-calls.js";
import type { WhatsAppAccount } from "./whatsapp-accounts.js";

/** Runs a handler of the global holder's core (`AdapterStartContext.callHolder`). */
export type CallHolder = (name: string, params: unknown) => Promise<unknown>;

/** One account started send-only: its sends and typing go to the gateway holding its socket. */
export interface HolderAccount {
  readonly account: WhatsAppAccount;
  readonly sendOnly: true;
  send(to: string | undefined, message: OutboundMessage): Promise<string[]>;
  typing(to: string | undefined): Promise<void>;
  stop(): Promise<void>;
}

/** A call that did not reach a holder able to send (none known, unreachable, socket not open): the outbox retries it. */
function notSent(accountId: string, err: unknown): DeliveryError {
  const why = err instanceof Error ? err.message : String(err);
  return new DeliveryError(
    `WhatsApp account "${accountId}" sends through the gateway holding it, which did not: ${why}`,
    {
      retryable: true,
      reason: "not_connected",
      cause: err,
    },
  );
}

/**
 * Starts one account send-only (`AdapterStartContext.receive` false, `cluster.owners: "many"` on a
 * partition core): no socket, no credentials read, no lease. Each piece is sent by the global
 * holder (peer call `whatsapp.send`), which answers the message id; the outbox here keeps the
 * piece's progress and the chat's lane claim, so a call that fails leaves the piece pending.
 */
export function holderAccount(account: WhatsAppAccount, callHolder: CallHolder): HolderAccount {
  const { accountId } = account;
  return {
    account,
    sendOnly: true,
    async send(to, message) {
      const params = { accountId, ...(to !== undefined && { to }), message: pieceOf(message) };
      const answer = SendAnswerSchema.parse(
        await callHolder(WHATSAPP_SEND, params).catch((err: unknown) => {
          throw notSent(accountId, err);
        }),
      );
      if ("messageIds" in answer) return answer.messageIds;
      const { message: text, ...refusal } = answer.refused;
      throw new DeliveryError(text, refusal);
    },
    async typing(to) {
      await callHolder(WHATSAPP_TYPING, { accountId, ...(to !== undefined && { to }) });
    },
    stop: async () => undefined,
  };
}

/** The piece's fields the holder needs (`kind` is the web chat's). */
function pieceOf(message: OutboundMessage) {
  const { text, replyToMessageId, part, idempotencyKey } = message;
  return {
    text,
    ...(replyToMessageId !== undefined && { replyToMessageId }),
    ...(part && { part }),
    ...(idempotencyKey !== undefined && { idempotencyKey }),
  };
}
