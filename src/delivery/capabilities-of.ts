import type { ChannelCapabilities } from "./channel-adapter.js";

/**
 * Looks up what a channel's adapter declared; undefined for a channel no adapter serves. The core
 * reads these flags instead of channel names, so a new adapter needs no change in the core.
 */
export type CapabilitiesOf = (channel: string) => ChannelCapabilities | undefined;

/**
 * True when a run should show a typing indicator on the channel: its adapter declares `typing`
 * (the web chat's does not). A channel the lookup does not know is tried (its adapter, if any, decides).
 */
export function showsTyping(capabilitiesOf: CapabilitiesOf | undefined, channel: string): boolean {
  const capabilities = capabilitiesOf?.(channel);
  return capabilities === undefined || capabilities.typing;
}
