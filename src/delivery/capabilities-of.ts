import type { ChannelCapabilities } from "./channel-adapter.js";

/**
 * Looks up what a channel's adapter declared; undefined for a channel no adapter serves. The core
 * reads these flags instead of channel names, so a new adapter needs no change in the core.
 */
export type CapabilitiesOf = (channel: string) => ChannelCapabilities | undefined;

/**
 * True when the channel's senders are the gateway's own clients (terminal, web UI): they passed
 * the gateway's auth and act as the owner. False for every platform channel and for a channel the
 * lookup does not know.
 */
export function servesGatewayClients(capabilitiesOf: CapabilitiesOf | undefined, channel: string): boolean {
  return capabilitiesOf?.(channel)?.gatewayClients === true;
}

/**
 * True when a run should show a typing indicator on the channel: its adapter declares `typing`
 * (the web chat's does not). A channel the lookup does not know is tried (its adapter, if any, decides).
 */
export function showsTyping(capabilitiesOf: CapabilitiesOf | undefined, channel: string): boolean {
  const capabilities = capabilitiesOf?.(channel);
  return capabilities === undefined || capabilities.typing;
}
