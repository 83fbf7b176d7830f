import { z } from "zod";
import type { RouteInput } from "./resolve-route.js";

const id = z
  .union([z.string(), z.number()])
  .transform((v) => String(v).trim())
  .pipe(z.string().min(1));

/** One platform message, as every adapter hands it to the core. */
export const InboundMessageSchema = z.object({
  channel: z.string().trim().toLowerCase().min(1).describe('channel name, e.g. "telegram"'),
  accountId: z.string().trim().min(1).default("default").describe("the bot account that received it"),
  chat: z.object({
    type: z.enum(["direct", "group", "channel"]),
    id: id.describe("the platform chat id, e.g. -1001234567890"),
    title: z.string().optional(),
    /** forum topic (groups) or DM thread id; Discord threads arrive as their own channel id instead */
    threadId: id.optional(),
    /** Telegram forum supergroup: topics are separate sessions */
    isForum: z.boolean().optional(),
    /** Discord guild */
    guildId: id.optional(),
    /** the channel a Discord thread belongs to: its rules (allow, requireMention) apply to the thread */
    parentId: id.optional(),
  }),
  sender: z.object({ id, name: z.string().optional(), username: z.string().optional() }),
  messageId: id.optional(),
  text: z.string().default(""),
  timestamp: z.number().optional(),
  /**
   * sent well before the adapter's connection opened (WhatsApp: older than connect - 30 s, the
   * offline messages delivered at connect): handled as usual, but a stranger gets no pairing code for it
   */
  beforeConnect: z.boolean().optional(),
  replyTo: z
    .object({ messageId: id.optional(), text: z.string().optional(), fromBot: z.boolean().optional() })
    .optional(),
  wasMentioned: z.boolean().default(false),
  /** a native command (Discord slash command): its name and arguments; `text` is then `/name args` */
  command: z.object({ name: z.string().min(1), args: z.string().default("") }).optional(),
  /** the platform event, for debugging only */
  raw: z.unknown().optional(),
});
export type InboundMessage = z.infer<typeof InboundMessageSchema>;

/**
 * What routing needs from a message: DMs are keyed by sender, groups and channels by chat;
 * a forum group's topic (General `1` when the platform sends none) becomes `:topic:`, a DM
 * thread becomes `:thread:`, and a thread id in a non-forum group is ignored.
 */
export function routeInputFromInbound(message: InboundMessage): RouteInput {
  const { chat } = message;
  const base = { channel: message.channel, accountId: message.accountId, guildId: chat.guildId };
  if (chat.type === "direct") return { ...base, peer: { kind: "dm", id: message.sender.id }, threadId: chat.threadId };
  if (chat.type === "group") {
    return {
      ...base,
      peer: { kind: "group", id: chat.id },
      topicId: chat.isForum ? (chat.threadId ?? "1") : undefined,
    };
  }
  return { ...base, peer: { kind: "channel", id: chat.id } };
}
