import type { ChannelCapabilities } from "./channel-adapter.js";

/**
 * Looks up what a channel's adapter declared; undefined for a channel no adapter serves. The core
 * reads these flags instead of channel names, so a new adapter needs no change in the core.
 */
export type CapabilitiesOf = (channel: string) => ChannelCapabilities | undefined;

/**
 * True when the channel's senders are the gateway's own clients (terminal, web UI): they act as the
 * owner, sendPolicy does not gate them, and a turn's reply reaches them as run events, not as a
 * delivery. False for every platform channel and for a channel the lookup does not know.
 */
export function servesGatewayClients(capabilitiesOf: CapabilitiesOf | undefined, channel: string): boolean {
  return capabilitiesOf?.(channel)?.gatewayClients === true;
}

/**
 * True when a run should show a typing indicator on the channel: its adapter declares `typing`
 * and is not the gateway's clients' channel. A channel the lookup does not know is tried (its
 * adapter, if any, decides).
 */
export function showsTyping(capabilitiesOf: CapabilitiesOf | undefined, channel: string): boolean {
  const capabilities = capabilitiesOf?.(channel);
  return capabilities === undefined || (capabilities.typing && !capabilities.gatewayClients);
}
