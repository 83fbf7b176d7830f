// Capability lookups for unit tests of the core: the web chat's real adapter for the gateway's own
// clients, and fake adapters standing for platform channels.
import type { CapabilitiesOf } from "../../src/delivery/capabilities-of.js";
import type { ChannelAdapter } from "../../src/delivery/channel-adapter.js";
import { createEventHub } from "../../src/gateway/event-hub.js";
import { createWebchatAdapter } from "../../src/gateway/webchat-adapter.js";
import { createFakeChannelAdapter } from "./fake-channel-adapter.js";

/** The capabilities of these adapters by id; a channel none of them serves has none. */
export function capabilitiesOfAdapters(...adapters: ChannelAdapter[]): CapabilitiesOf {
  const byId = new Map(adapters.map((a) => [a.id, a.capabilities]));
  return (channel) => byId.get(channel);
}

/**
 * The channels unit tests use: the web chat (gateway clients), Telegram with its command menu,
 * WhatsApp without one.
 */
export const TEST_CAPABILITIES: CapabilitiesOf = capabilitiesOfAdapters(
  createWebchatAdapter(createEventHub()),
  createFakeChannelAdapter({ id: "telegram", nativeCommands: true }),
  createFakeChannelAdapter({ id: "whatsapp" }),
);
