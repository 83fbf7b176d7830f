import type { InboundMessage } from "../routing/inbound-message.js";
import { lastRoutePatch } from "./delivery-context.js";
import type { SessionEntry, SessionEntryPatch, SessionOrigin } from "./session-entry.js";

function slug(value: string): string {
  return value
    .toLowerCase()
    .replace(/\s+/g, "-")
    .replace(/[^a-z0-9#@._+-]/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "");
}

function shortId(id: string): string {
  return id.length > 14 ? `${id.slice(0, 6)}...${id.slice(-4)}` : id;
}

/** `discord:friends-of-clawd#general`, `whatsapp:g-family-chat`, `telegram:g-1001234567890`. */
export function buildGroupDisplayName(input: {
  channel: string;
  id: string;
  subject?: string;
  groupChannel?: string;
  space?: string;
}): string {
  const { channel, id, subject, groupChannel, space } = input;
  const detail =
    space && groupChannel
      ? `${space}${groupChannel.startsWith("#") ? "" : "#"}${groupChannel}`
      : (groupChannel ?? subject ?? space);
  let name = slug(detail ?? id) || slug(shortId(id));
  if (!groupChannel && name.startsWith("#")) name = name.slice(1);
  if (!/^[@#]/.test(name) && !name.startsWith("g-") && !name.includes("#")) name = `g-${name}`;
  return `${channel}:${name}`;
}

/** A readable name for the chat: the sender in DMs, the title (plus `id:<n>` for numeric and @g.us ids) in groups. */
export function conversationLabel(message: InboundMessage): string {
  const { chat, sender } = message;
  if (chat.type === "direct") return sender.name ?? sender.username ?? sender.id;
  const title = chat.title?.trim();
  if (!title) return chat.id;
  const idWorthShowing = /^-?\d+$/.test(chat.id) || chat.id.includes("@g.us");
  return idWorthShowing && !title.includes(chat.id) && !title.includes(" id:") && !/^[#@]/.test(title)
    ? `${title} id:${chat.id}`
    : title;
}

/** Where this message came from, for the entry's `origin`. */
function deriveOrigin(message: InboundMessage): SessionOrigin {
  const { chat } = message;
  return {
    label: conversationLabel(message),
    channel: message.channel,
    chatType: chat.type,
    from:
      chat.type === "direct" ? `${message.channel}:${message.sender.id}` : `${message.channel}:${chat.type}:${chat.id}`,
    to: chat.id,
    accountId: message.accountId,
    ...(chat.threadId !== undefined && { threadId: chat.threadId }),
  };
}

/**
 * The metadata fields an inbound message sets on its session: origin (merged over the old one),
 * labels, and the last route. It never touches `updatedAt`: only real turns do.
 */
export function inboundMetadataPatch(message: InboundMessage, current: SessionEntry | undefined): SessionEntryPatch {
  const { chat } = message;
  const patch: SessionEntryPatch = {
    origin: { ...(current?.origin ?? {}), ...deriveOrigin(message) },
    channel: message.channel,
    chatType: chat.type,
    ...lastRoutePatch({ channel: message.channel, to: chat.id, accountId: message.accountId, threadId: chat.threadId }),
  };
  if (chat.type === "direct") {
    patch.displayName = message.sender.name ?? message.sender.username ?? current?.displayName;
    return patch;
  }
  const title = chat.title?.trim();
  const isChannelName = chat.type === "channel" && title?.startsWith("#");
  patch.groupId = chat.id;
  patch.subject = isChannelName ? current?.subject : (title ?? current?.subject);
  patch.groupChannel = isChannelName ? title : current?.groupChannel;
  patch.displayName = buildGroupDisplayName({
    channel: message.channel,
    id: chat.id,
    ...(patch.subject && { subject: patch.subject }),
    ...(patch.groupChannel && { groupChannel: patch.groupChannel }),
  });
  return patch;
}
