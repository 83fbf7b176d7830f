import { type WAMessage, isJidBroadcast, isJidNewsletter, isJidStatusBroadcast } from "baileys";
import type { InboundMessage } from "../../src/index.js";
import { type SelfIdentity, bareJid, e164Of, isGroup, isLid, isSelf } from "./jids.js";
import { contextInfoOf, textOf, unwrap } from "./message-text.js";
import { stripLeadingSelfMention } from "./self-mention.js";

/** One message of a `messages.upsert` event, with the event's type (`notify` live, `append` history). */
export interface UpsertItem {
  type: string;
  message: WAMessage;
}

/** What {@link toInbound} knows besides the message; all of it looked up by the adapter beforehand. */
export interface InboundContext {
  accountId: string;
  self: SelfIdentity;
  /** the linked number is the owner's own: their "message yourself" chat talks to the bot */
  selfChatMode?: boolean;
  /** LID (`<digits>@lid`) -> phone JID, from the socket's LID mapping */
  lidToPn?: Readonly<Record<string, string>>;
  /** group JID -> subject, from cached group metadata */
  groupSubjects?: Readonly<Record<string, string>>;
  /** ids of messages the bot sent itself (their echo in self-chat must not be answered) */
  sentByBot?: ReadonlySet<string>;
  /** ms; when the account's connection last opened: older messages are marked `beforeConnect` */
  connectedAt?: number;
}

/** How much older than the connection a message must be to count as sent before it (clock skew, in-flight sends). */
const BEFORE_CONNECT_MS = 30_000;

/** Either a message for the core or why there is none (for the log). */
export type MappedUpsert = { message: InboundMessage } | { dropped: string };

/** The phone number (`+<digits>`) behind a sender JID: itself, its alternate address, or the LID mapping. */
function resolveE164(jid: string, alt: string | null | undefined, context: InboundContext): string | undefined {
  return e164Of(jid) ?? e164Of(alt) ?? (isLid(jid) ? e164Of(context.lidToPn?.[bareJid(jid)]) : undefined) ?? undefined;
}

function timestampOf(message: WAMessage): number | undefined {
  const raw = message.messageTimestamp;
  if (raw === null || raw === undefined) return undefined;
  const seconds = Number(typeof raw === "object" ? raw.toString() : raw);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}

function mentioned(
  info: ReturnType<typeof contextInfoOf>,
  text: string,
  group: boolean,
  context: InboundContext,
): boolean {
  if (!group) return false;
  const self = context.self;
  if (stripLeadingSelfMention(text, self) !== text) return true;
  // In self-chat mode the owner's own number is the bot's: an @-mention of the owner is not for the bot.
  if (context.selfChatMode) return false;
  if ((info?.mentionedJid ?? []).some((jid) => isSelf(jid, self))) return true;
  return Boolean(info?.stanzaId && isSelf(info.participant, self));
}

function replyOf(info: ReturnType<typeof contextInfoOf>, context: InboundContext): InboundMessage["replyTo"] {
  if (!info?.stanzaId) return undefined;
  const quoted = textOf(unwrap(info.quotedMessage));
  return {
    messageId: info.stanzaId,
    ...(quoted !== undefined && { text: quoted }),
    fromBot: isSelf(info.participant, context.self) || Boolean(context.sentByBot?.has(info.stanzaId)),
  };
}

/**
 * Maps one upserted WhatsApp message to the core's {@link InboundMessage}, or says why it is dropped:
 * history (`append`), status and broadcast lists, newsletters, the bot's own messages (except the
 * owner's self-chat in `selfChatMode`), messages without text, and DMs whose phone number cannot be
 * resolved (never routed to a session keyed by a privacy id). Pure: it reads the message and the
 * context only. DMs are keyed by the sender's E.164 (`+<digits>`); groups by their JID, with the
 * participant as sender. A leading `@<our number>` is removed from the text and counts as a mention.
 */
export function mapUpsert(item: UpsertItem, context: InboundContext): MappedUpsert {
  const { message } = item;
  const key = message?.key;
  const remoteJid = key?.remoteJid;
  if (!remoteJid || !key.id) return { dropped: "no chat or message id" };
  if (item.type !== "notify") return { dropped: `history (${item.type})` };
  if (isJidStatusBroadcast(remoteJid) || isJidBroadcast(remoteJid) || isJidNewsletter(remoteJid))
    return { dropped: "status, broadcast or newsletter" };
  const group = isGroup(remoteJid);
  const selfChat = !group && isSelf(remoteJid, context.self);
  if (context.sentByBot?.has(key.id)) return { dropped: "sent by the bot" };
  if (key.fromMe && !(selfChat && context.selfChatMode)) return { dropped: "own message" };
  const content = unwrap(message.message);
  const typed = textOf(content);
  if (typed === undefined) return { dropped: "no text" };

  const senderJid = group ? key.participant : remoteJid;
  if (!senderJid) return { dropped: "group message without participant" };
  const e164 = selfChat
    ? e164Of(context.self.pn)
    : resolveE164(senderJid, group ? key.participantAlt : key.remoteJidAlt, context);
  if (!group && !e164) return { dropped: `the phone number of ${senderJid} is unknown` };
  const info = contextInfoOf(content);
  const replyTo = replyOf(info, context);
  const subject = group ? context.groupSubjects?.[remoteJid] : undefined;
  const name = message.pushName ?? undefined;
  const timestamp = timestampOf(message);
  const beforeConnect =
    timestamp !== undefined && context.connectedAt !== undefined && timestamp < context.connectedAt - BEFORE_CONNECT_MS;
  return {
    message: {
      channel: "whatsapp",
      accountId: context.accountId,
      chat: {
        type: group ? "group" : "direct",
        id: group ? remoteJid : e164!,
        ...(subject && { title: subject }),
      },
      sender: { id: e164 ?? bareJid(senderJid), ...(name && { name }) },
      messageId: key.id,
      text: stripLeadingSelfMention(typed, context.self),
      ...(timestamp !== undefined && { timestamp }),
      ...(beforeConnect && { beforeConnect }),
      ...(replyTo && { replyTo }),
      wasMentioned: mentioned(info, typed, group, context),
      raw: item,
    },
  };
}

/** {@link mapUpsert} for callers that only need the message: null when it is dropped. */
export function toInbound(item: UpsertItem, context: InboundContext): InboundMessage | null {
  const mapped = mapUpsert(item, context);
  return "message" in mapped ? mapped.message : null;
}
