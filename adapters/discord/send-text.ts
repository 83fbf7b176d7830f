import { createHash } from "node:crypto";
import { type Client, PermissionFlagsBits, type PermissionsString, Routes } from "discord.js";
import type { OutboundMessage } from "../../src/index.js";
import type { DiscordTarget } from "./discord-target.js";
import { DiscordCodes, discordCodeOf, toDeliveryError } from "./discord-errors.js";
import { type MessageLimits, splitMessage } from "./split-text.js";

/** How replies quote the message answered: `off` never, `first` only the first piece, `all` every piece. */
type ReplyToMode = "off" | "first" | "all";

/** What {@link sendText} needs besides the message. */
export interface SendTextOptions {
  replyToMode: ReplyToMode;
  limits: MessageLimits;
}

function referenceOf(message: OutboundMessage, mode: ReplyToMode, piece: number) {
  if (mode === "off" || message.replyToMessageId === undefined) return {};
  if (mode === "first" && ((message.part?.index ?? 0) > 0 || piece > 0)) return {};
  // The message answered may be gone by now; the reply then goes out without the quote.
  return { message_reference: { message_id: message.replyToMessageId, fail_if_not_exists: false } };
}

/** Discord drops a second message with the same nonce (within a few minutes) when `enforce_nonce` is set. */
function nonceOf(key: string | undefined, piece: number): { nonce?: string; enforce_nonce?: boolean } {
  if (!key) return {};
  const nonce = createHash("sha256").update(`${key}/${piece}`).digest("hex").slice(0, 25);
  return { nonce, enforce_nonce: true };
}

/** The channel a target writes to: a channel as is, a user's DM channel (opened once, then cached by discord.js). */
async function channelIdOf(client: Client<true>, target: DiscordTarget): Promise<string> {
  if (target.kind === "channel") return target.id;
  return (await client.users.createDM(target.id)).id;
}

/** The permissions the bot lacks to write in a channel, when the cache knows the channel; else undefined. */
function missingPermissions(client: Client<true>, channelId: string): PermissionsString[] | undefined {
  const channel = client.channels.cache.get(channelId);
  if (!channel || channel.isDMBased() || !("permissionsFor" in channel)) return undefined;
  const needed = [
    PermissionFlagsBits.ViewChannel,
    channel.isThread() ? PermissionFlagsBits.SendMessagesInThreads : PermissionFlagsBits.SendMessages,
  ];
  return channel.permissionsFor(client.user)?.missing(needed);
}

/**
 * Sends one outbound message: Discord markdown as written, split into pieces of at most
 * `limits.maxLength` characters and `limits.maxLines` lines (code fences closed and reopened), the
 * first piece quoting per `replyToMode`. Each piece carries a nonce derived from the message's
 * idempotency key. Failures become {@link DeliveryError}s; nothing is retried here (discord.js
 * waits out short rate limits by itself).
 */
export async function sendText(
  client: Client<true>,
  target: DiscordTarget,
  message: OutboundMessage,
  options: SendTextOptions,
): Promise<string[]> {
  const described = `${target.kind} ${target.id}`;
  let channelId: string | undefined;
  const ids: string[] = [];
  try {
    channelId = await channelIdOf(client, target);
    const pieces = splitMessage(message.text, options.limits);
    for (const [piece, content] of pieces.entries()) {
      const sent = (await client.rest.post(Routes.channelMessages(channelId), {
        body: {
          content,
          allowed_mentions: { parse: ["users"], replied_user: false },
          ...referenceOf(message, options.replyToMode, piece),
          ...nonceOf(message.idempotencyKey, piece),
        },
      })) as { id: string };
      ids.push(sent.id);
    }
    return ids;
  } catch (err) {
    const missing =
      channelId !== undefined && discordCodeOf(err) === DiscordCodes.MISSING_PERMISSIONS
        ? missingPermissions(client, channelId)
        : undefined;
    throw toDeliveryError(err, { target: described, ...(missing && { missingPermissions: missing }) });
  }
}
