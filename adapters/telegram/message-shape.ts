import { z } from "zod";

// The fields of a Bot API message that toInbound reads, checked before it reads them: a malformed
// update (a field missing or of the wrong type) is refused with the path that is wrong, never
// turned into a half-right inbound message. Loose objects: Telegram adds fields all the time.

const UserShape = z.looseObject({
  id: z.number().int(),
  first_name: z.string(),
  last_name: z.string().optional(),
  username: z.string().optional(),
});
const ChatShape = z.looseObject({
  id: z.number().int(),
  type: z.string(),
  title: z.string().optional(),
  username: z.string().optional(),
  is_forum: z.boolean().optional(),
});
const EntityShape = z.looseObject({
  type: z.string(),
  offset: z.number().int().min(0),
  length: z.number().int().min(0),
  user: UserShape.optional(),
});

/** A message as toInbound needs it. */
const TelegramMessageShape = z.looseObject({
  message_id: z.number().int(),
  date: z.number().int().min(0),
  chat: ChatShape,
  from: UserShape.optional(),
  sender_chat: ChatShape.optional(),
  text: z.string().optional(),
  caption: z.string().optional(),
  entities: z.array(EntityShape).optional(),
  caption_entities: z.array(EntityShape).optional(),
  message_thread_id: z.number().int().optional(),
  is_topic_message: z.boolean().optional(),
  reply_to_message: z
    .looseObject({
      message_id: z.number().int(),
      from: UserShape.optional(),
      text: z.string().optional(),
      caption: z.string().optional(),
    })
    .optional(),
  quote: z.looseObject({ text: z.string() }).optional(),
});

/** An update whose message cannot be read: it is logged and acknowledged, never retried. */
export class MalformedUpdateError extends Error {
  constructor(reason: string) {
    super(`malformed Telegram update: ${reason}`);
    this.name = "MalformedUpdateError";
  }
}

/** Checks the message toInbound will read; throws {@link MalformedUpdateError} naming what is wrong. */
export function checkMessageShape(message: unknown): void {
  const checked = TelegramMessageShape.safeParse(message);
  if (!checked.success) throw new MalformedUpdateError(z.prettifyError(checked.error).replace(/\n/g, "; "));
}
