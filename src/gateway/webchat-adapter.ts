import { randomUUID } from "node:crypto";
import type { ChannelAdapter } from "../delivery/channel-adapter.js";
import { opaqueTargetCodec } from "../delivery/delivery-target.js";
import type { EventHub } from "./event-hub.js";

/**
 * The gateway's own clients (terminal and web chat). Replies to them travel as run events and
 * method results; only unsolicited messages (announces, notices) are delivered to this channel.
 * The core never names it: it reads the adapter's `gatewayClients` capability.
 */
const CLIENT_CHANNEL = "webchat";

/**
 * The gateway clients' channel: announces and notices delivered to it are pushed to connected
 * clients as a `chat.delivery` event (target `to` is the session key). Nothing to start or stop.
 */
export function createWebchatAdapter(events: EventHub): ChannelAdapter {
  return {
    id: CLIENT_CHANNEL,
    capabilities: {
      maxTextLength: 100_000,
      typing: false,
      nativeCommands: false,
      deduplicatesSends: true,
      gatewayClients: true,
    },
    targets: opaqueTargetCodec(CLIENT_CHANNEL),
    start: async () => undefined,
    stop: async () => undefined,
    async send(target, message) {
      // A stable id per piece lets a client drop a repeat that a restart resent.
      const messageId = message.idempotencyKey ?? randomUUID();
      events.emit("chat.delivery", { sessionKey: target.to, text: message.text, messageId });
      return { messageIds: [messageId] };
    },
  };
}
