import type { BaileysEventMap, WAMessage, WAMessageKey } from "baileys";
import type { InboundSink, Logger } from "../../src/index.js";
import { type SelfIdentity, bareJid, isGroup, isLid, isSelf } from "./jids.js";
import { type InboundContext, mapUpsert } from "./to-inbound.js";
import type { WhatsAppAccount } from "./whatsapp-accounts.js";
import type { WhatsAppSocket } from "./whatsapp-socket.js";

const GROUP_METADATA_TTL_MS = 5 * 60_000;
/** how many recent messages are kept for quoting and echo detection */
const REMEMBERED = 500;

/** Dependencies of {@link createInboundHandler}. */
export interface InboundHandlerDeps {
  sink: InboundSink;
  logger: Logger;
  self: () => SelfIdentity;
  /** ms; when the connection last opened (undefined before the first open) */
  connectedAt: () => number | undefined;
}

/** A bounded map: the oldest entry goes when it is full. */
function bounded<V>(limit: number) {
  const map = new Map<string, V>();
  return {
    get: (key: string) => map.get(key),
    has: (key: string) => map.has(key),
    set(key: string, value: V) {
      map.delete(key);
      map.set(key, value);
      if (map.size > limit) map.delete(map.keys().next().value!);
    },
  };
}

/**
 * Handles `messages.upsert` for one account: looks up what the pure mapping needs (the phone number
 * behind a LID, the group's subject), maps, hands the message to the sink, and sends the read
 * receipt only after the sink stored it. A message the sink could not store gets no receipt.
 */
export function createInboundHandler(account: WhatsAppAccount, deps: InboundHandlerDeps) {
  const { logger, sink } = deps;
  const log = { channel: "whatsapp", accountId: account.accountId };
  const subjects = new Map<string, { subject: string; at: number }>();
  const recentInbound = bounded<WAMessage>(REMEMBERED);
  const sentIds = bounded<true>(REMEMBERED);
  const sentSet: ReadonlySet<string> = { has: (id: string) => sentIds.has(id) } as ReadonlySet<string>;
  // Events are handled one after another, so messages reach the sink in the order WhatsApp sent them.
  let tail: Promise<void> = Promise.resolve();

  async function subjectOf(socket: WhatsAppSocket, jid: string): Promise<string | undefined> {
    const cached = subjects.get(jid);
    if (cached && Date.now() - cached.at < GROUP_METADATA_TTL_MS) return cached.subject;
    try {
      const metadata = await socket.groupMetadata(jid);
      subjects.set(jid, { subject: metadata.subject, at: Date.now() });
      return metadata.subject;
    } catch (err) {
      // The subject is only a display name: the message is still handled without it.
      logger.debug({ ...log, jid, err }, "whatsapp group metadata unavailable");
      return cached?.subject;
    }
  }

  async function lidLookup(socket: WhatsAppSocket, message: WAMessage): Promise<Record<string, string>> {
    const { key } = message;
    const group = isGroup(key.remoteJid);
    const jid = group ? key.participant : key.remoteJid;
    const alt = group ? key.participantAlt : key.remoteJidAlt;
    if (!jid || !isLid(jid) || (alt && !isLid(alt))) return {};
    try {
      const pn = await socket.signalRepository?.lidMapping?.getPNForLID(bareJid(jid));
      return pn ? { [bareJid(jid)]: pn } : {};
    } catch (err) {
      // An unknown LID: the mapping drops the DM rather than guessing.
      logger.debug({ ...log, jid, err }, "whatsapp LID mapping lookup failed");
      return {};
    }
  }

  async function handle(socket: WhatsAppSocket, type: string, message: WAMessage): Promise<void> {
    const remoteJid = message.key?.remoteJid ?? undefined;
    const context: InboundContext = {
      accountId: account.accountId,
      self: deps.self(),
      selfChatMode: account.settings.selfChatMode === true,
      sentByBot: sentSet,
    };
    const connectedAt = deps.connectedAt();
    if (connectedAt !== undefined) context.connectedAt = connectedAt;
    if (type === "notify" && remoteJid) {
      context.lidToPn = await lidLookup(socket, message);
      if (isGroup(remoteJid)) {
        const subject = await subjectOf(socket, remoteJid);
        if (subject) context.groupSubjects = { [remoteJid]: subject };
      }
    }
    const mapped = mapUpsert({ type, message }, context);
    if ("dropped" in mapped) {
      const level = mapped.dropped.includes("phone number") ? "warn" : "debug";
      logger[level](
        { ...log, messageId: message.key?.id, remoteJid, reason: mapped.dropped },
        "whatsapp message dropped",
      );
      return;
    }
    recentInbound.set(mapped.message.messageId!, message);
    try {
      await sink(mapped.message);
    } catch (err) {
      logger.error({ ...log, messageId: message.key.id, err }, "whatsapp message not stored; no read receipt sent");
      return;
    }
    const selfChat = !isGroup(remoteJid) && isSelf(remoteJid, context.self);
    if (account.settings.sendReadReceipts === false || selfChat) return;
    await socket.readMessages([message.key]).catch((err: unknown) => {
      // A receipt is a courtesy: the message is stored and answered either way.
      logger.debug({ ...log, messageId: message.key.id, err }, "whatsapp read receipt failed");
    });
  }

  return {
    /** handles one `messages.upsert` event, message by message in order */
    upsert(socket: WhatsAppSocket, event: BaileysEventMap["messages.upsert"]): Promise<void> {
      tail = tail.then(async () => {
        for (const message of event.messages) {
          try {
            await handle(socket, event.type, message);
          } catch (err) {
            // One malformed message must not stop the others: logged and skipped.
            logger.error({ ...log, messageId: message?.key?.id, err }, "whatsapp message could not be handled");
          }
        }
      });
      return tail;
    },
    recent: (id: string) => recentInbound.get(id),
    rememberSent(key: WAMessageKey | undefined) {
      if (key?.id) sentIds.set(key.id, true);
    },
    /** resolves when every message received so far is handled */
    idle: () => tail,
  };
}
