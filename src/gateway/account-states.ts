import type { Config } from "../config/schema/index.js";
import type { ChannelAdapter } from "../delivery/channel-adapter.js";
import { channelAccountIds } from "../delivery/account-settings.js";
import type { AccountState } from "./readiness.js";

/**
 * Every platform channel account the gateway runs and whether it is connected: as the adapter
 * reports it (`accountHealth`: WhatsApp, an account started send-only, one started while its platform was away until it
 * connects), else connected while the gateway has its adapters
 * started. Only channels with a `channels.<id>` section have accounts: the gateway's own clients
 * (web chat) have none and are left out.
 */
export function accountStates(
  adapters: Iterable<ChannelAdapter>,
  config: Pick<Config, "channels">,
  started: boolean,
): AccountState[] {
  const states: AccountState[] = [];
  for (const adapter of adapters) {
    const section = config.channels[adapter.id];
    if (!section) continue;
    const ids = channelAccountIds(section);
    for (const accountId of ids) {
      const health = adapter.accountHealth?.(accountId);
      if (health)
        states.push({
          channel: adapter.id,
          accountId,
          connected: health.connected,
          reason: health.lastError,
          ...(health.sendOnly && { sendOnly: true }),
        });
      else
        states.push({
          channel: adapter.id,
          accountId,
          connected: started,
          reason: started ? undefined : "the channel is not started",
        });
    }
  }
  return states;
}
