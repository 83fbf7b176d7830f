// The core's channels: the built-in web chat (the gateway's own clients) and the platform adapters.
import type { CapabilitiesOf } from "../delivery/capabilities-of.js";
import type { ChannelAdapter } from "../delivery/channel-adapter.js";
import type { EventHub } from "./event-hub.js";
import { createWebchatAdapter } from "./webchat-adapter.js";

/** The channels: the built-in web chat (the gateway's own clients) first, then the platform adapters. */
export function channelsOf(deps: { events: EventHub; adapters?: ChannelAdapter[] }) {
  const webchat = createWebchatAdapter(deps.events);
  const adapters = new Map<string, ChannelAdapter>([
    [webchat.id, webchat],
    ...(deps.adapters ?? []).map((a) => [a.id, a] as const),
  ]);
  /** What each channel's adapter declared: the core reads these flags, never channel names. */
  const capabilitiesOf: CapabilitiesOf = (channel) => adapters.get(channel)?.capabilities;
  const targetsOf = (channel: string) => adapters.get(channel)?.targets;
  return { adapters, capabilitiesOf, targetsOf, clientChannel: webchat.id };
}
