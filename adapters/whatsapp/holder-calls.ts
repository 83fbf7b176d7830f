// The peer calls of WhatsApp with `cluster.owners: "many"` (docs/whatsapp.md "Many mode"): a
// partition core sends through the global holder, the one gateway with the account's socket. One
// schema per call's params and one for its answer, checked where they arrive.
import { z } from "zod";

/** Sends one piece on the holder's socket; answers {@link SendAnswer}. */
export const WHATSAPP_SEND = "whatsapp.send";
/** Shows `composing` in a chat from the holder's socket; best effort. */
export const WHATSAPP_TYPING = "whatsapp.typing";

/** `whatsapp.send`'s params: the account, the target's `to` and the piece as the delivery gate gave it. */
export const SendParamsSchema = z.object({
  accountId: z.string(),
  to: z.string().optional(),
  message: z.object({
    text: z.string(),
    replyToMessageId: z.string().optional(),
    part: z.object({ index: z.number().int(), count: z.number().int() }).optional(),
    idempotencyKey: z.string().optional(),
  }),
});
export type SendParams = z.infer<typeof SendParamsSchema>;

/**
 * The holder's answer: the platform's message ids, or WhatsApp's refusal of the piece (a number not
 * on WhatsApp, a device logged out) as the holder's adapter classified it, so the sender records it alike.
 */
export const SendAnswerSchema = z.union([
  z.object({ messageIds: z.array(z.string()) }),
  z.object({
    refused: z.object({
      message: z.string(),
      retryable: z.boolean(),
      reason: z.string(),
      retryAfterMs: z.number().optional(),
    }),
  }),
]);
export type SendAnswer = z.infer<typeof SendAnswerSchema>;

/** `whatsapp.typing`'s params. */
export const TypingParamsSchema = z.object({ accountId: z.string(), to: z.string().optional() });
