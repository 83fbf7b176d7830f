import { z } from "zod";

// The fields of a gateway MESSAGE_CREATE payload that toInbound reads, checked before it reads them:
// a malformed payload is refused with the path that is wrong, never turned into a half-right
// inbound message. Loose objects: Discord adds fields all the time.

const snowflake = z.string().regex(/^\d+$/, "a Discord id (digits)");

const UserShape = z.looseObject({
  id: snowflake,
  username: z.string(),
  global_name: z.string().nullish(),
  bot: z.boolean().optional(),
});

const ReferencedShape = z.looseObject({
  id: snowflake,
  content: z.string().optional(),
  author: UserShape.optional(),
});

/** A message as toInbound needs it (a gateway MESSAGE_CREATE `d`). */
export const DiscordMessageShape = z.looseObject({
  id: snowflake,
  channel_id: snowflake,
  guild_id: snowflake.optional(),
  author: UserShape,
  member: z.looseObject({ nick: z.string().nullish() }).optional(),
  content: z.string(),
  timestamp: z.string(),
  type: z.number().int(),
  webhook_id: snowflake.optional(),
  mentions: z.array(z.looseObject({ id: snowflake })).default([]),
  message_reference: z.looseObject({ message_id: snowflake.optional() }).optional(),
  referenced_message: ReferencedShape.nullish(),
});
type DiscordMessagePayload = z.input<typeof DiscordMessageShape>;

/** What the client's channel cache knows about the channel a message arrived in (nothing for an uncached DM). */
const DiscordPlaceShape = z.looseObject({
  /** Discord's channel type: 0 text, 1 DM, 3 group DM, 5 announcement, 10/11/12 threads, 15 forum */
  type: z.number().int(),
  name: z.string().optional(),
  /** a thread's parent channel */
  parentId: snowflake.optional(),
  parentName: z.string().optional(),
});
export type DiscordPlace = z.infer<typeof DiscordPlaceShape>;

/** One inbound message event: the gateway payload and what is known about its channel. */
export interface DiscordMessageEvent {
  message: DiscordMessagePayload;
  channel?: DiscordPlace;
}

/** A message event whose payload cannot be read: it is logged and dropped (the gateway never sends it again). */
export class MalformedMessageError extends Error {
  constructor(reason: string) {
    super(`malformed Discord message: ${reason}`);
    this.name = "MalformedMessageError";
  }
}

/** Checks the payload toInbound will read; throws {@link MalformedMessageError} naming what is wrong. */
export function checkMessageShape(event: unknown): {
  message: z.infer<typeof DiscordMessageShape>;
  channel?: DiscordPlace;
} {
  const shape = z.looseObject({ message: DiscordMessageShape, channel: DiscordPlaceShape.optional() });
  const checked = shape.safeParse(event);
  if (!checked.success) throw new MalformedMessageError(z.prettifyError(checked.error).replace(/\n/g, "; "));
  return checked.data.channel
    ? { message: checked.data.message, channel: checked.data.channel }
    : { message: checked.data.message };
}
