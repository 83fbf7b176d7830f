import { type InboundMessage, InboundMessageSchema } from "../../src/routing/index.js";

/** The sender of {@link telegramDm} with a display name. */
export const ADA = { id: "42", name: "Ada" } as const;

/** A Telegram DM `text` from user 42 in chat 42, as an adapter hands it over; `fields` add or replace any part (messageId, sender, ...). */
export function telegramDm(text: string, fields: Record<string, unknown> = {}): InboundMessage {
  return InboundMessageSchema.parse({
    channel: "telegram",
    chat: { type: "direct", id: "42" },
    sender: { id: "42" },
    text,
    ...fields,
  });
}
