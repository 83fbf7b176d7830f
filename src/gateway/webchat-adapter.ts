import { randomUUID } from "node:crypto";
import type { ChannelAdapter } from "../delivery/channel-adapter.js";
import { opaqueTargetCodec } from "../delivery/delivery-target.js";
import type { EventHub } from "./event-hub.js";

/**
 * The gateway's own clients (terminal and web chat). Replies, notices and announces reach them as
 * they reach any chat: delivered through the gate to this adapter, whose send is an event. The core
 * never names it: it reads the adapter's `gatewayClients` capability (the gate's sendPolicy bypass).
 */
export const CLIENT_CHANNEL = "webchat";

/**
 * The gateway clients' channel: a message delivered to it is pushed to the clients of its session
 * as a `chat.delivery` event (target `to` is the session key) with its kind (reply, notice,
 * announce). No typing indicator; nothing to start or stop.
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
      events.emit("chat.delivery", {
        sessionKey: target.to,
        text: message.text,
        messageId,
        kind: message.kind ?? "notice",
      });
      return { messageIds: [messageId] };
    },
  };
}
