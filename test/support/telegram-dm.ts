import { type InboundMessage, InboundMessageSchema } from "../../src/routing/index.js";

/** The sender of {@link telegramDm} with a display name. */
export const ADA = { id: "42", name: "Ada" } as const;

/** A Telegram DM `text` from user `senderId` in their own chat, as an adapter hands it over; `fields` add or replace any part (messageId, sender, ...). */
export function telegramDmFrom(senderId: string, text: string, fields: Record<string, unknown> = {}): InboundMessage {
  return InboundMessageSchema.parse({
    channel: "telegram",
    chat: { type: "direct", id: senderId },
    sender: { id: senderId },
    text,
    ...fields,
  });
}

/** A Telegram DM `text` from user 42 (see {@link telegramDmFrom}). */
export const telegramDm = (text: string, fields: Record<string, unknown> = {}): InboundMessage =>
  telegramDmFrom("42", text, fields);
