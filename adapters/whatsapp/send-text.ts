import type { WAMessage } from "baileys";
import { DeliveryError, type OutboundMessage } from "../../src/index.js";
import type { AccountConnection } from "./account-connection.js";
import { markdownToWhatsApp } from "./markdown-to-whatsapp.js";
import { toDeliveryError } from "./whatsapp-errors.js";
import { type WhatsAppTarget, parseWhatsAppTarget } from "./whatsapp-target.js";

/** How {@link sendText} behaves for one account. */
export interface SendOptions {
  replyToMode: "off" | "first" | "all";
  /** how long a send waits for a closed connection to come back before the outbox retries it */
  waitMs: number;
  /** numbers already known to be on WhatsApp (checked once each) */
  knownNumbers: Set<string>;
}

function quoteFor(
  connection: AccountConnection,
  target: WhatsAppTarget,
  message: OutboundMessage,
  mode: SendOptions["replyToMode"],
): WAMessage | undefined {
  const id = message.replyToMessageId;
  if (!id || mode === "off" || (mode === "first" && (message.part?.index ?? 0) > 0)) return undefined;
  // The inbound message itself when remembered; else its key, which is all WhatsApp needs to quote.
  return connection.recent(id) ?? { key: { remoteJid: target.jid, id, fromMe: false }, message: { conversation: "" } };
}

async function checkOnWhatsApp(
  socket: NonNullable<Awaited<ReturnType<AccountConnection["socket"]>>>,
  target: WhatsAppTarget,
  known: Set<string>,
) {
  if (target.kind !== "dm" || known.has(target.e164)) return;
  const [result] = (await socket.onWhatsApp(target.jid)) ?? [];
  if (!result?.exists)
    throw new DeliveryError(
      `${target.e164} is not on WhatsApp: check the number (international form, with the country code).`,
      {
        retryable: false,
        reason: "chat_not_found",
      },
    );
  known.add(target.e164);
}

/**
 * Sends one text (already chunked by the delivery gate) in WhatsApp's own formatting, quoting the
 * message it answers as `replyToMode` says. A closed connection is waited for a little, then
 * reported as retryable; a device that was logged out, or a number without WhatsApp, is final.
 */
export async function sendText(
  connection: AccountConnection,
  to: string | undefined,
  message: OutboundMessage,
  options: SendOptions,
): Promise<string[]> {
  const target = parseWhatsAppTarget(to);
  const socket = await connection.socket(options.waitMs);
  if (!socket) {
    const status = connection.status();
    const why = status.lastError ?? "not connected";
    const final = !status.linked || why.includes("logged this device out");
    throw new DeliveryError(`WhatsApp account "${status.accountId}" is not connected: ${why}`, {
      retryable: !final,
      reason: final ? "not_linked" : "not_connected",
    });
  }
  try {
    await checkOnWhatsApp(socket, target, options.knownNumbers);
    const quoted = quoteFor(connection, target, message, options.replyToMode);
    const sent = await socket.sendMessage(
      target.jid,
      { text: markdownToWhatsApp(message.text) },
      quoted ? { quoted } : {},
    );
    connection.sent(sent?.key);
    return [sent?.key?.id ?? `${target.jid}:${Date.now()}`];
  } catch (err) {
    throw toDeliveryError(err);
  }
}
