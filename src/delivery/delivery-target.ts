import { DeliveryError, type TargetCodec } from "./channel-adapter.js";
import { ErrorCodes, SwitchboardError } from "../errors.js";
import type { DeliveryContext } from "../sessions/session-entry.js";

const THREAD_SUFFIX = /^(.+?):(?:topic|thread):([^:]+)$/i;

/**
 * Reads an announce target written as `<channel>:<to>[:topic:<n>|:thread:<id>]` into a delivery
 * context: the channel name, then the rest as the adapter's `to`, and a trailing topic or thread
 * as `threadId`. The core reads no platform syntax: `telegram:-1001234:topic:42` gives
 * `{ channel: "telegram", to: "-1001234", threadId: "42" }`, `discord:channel:123` gives
 * `{ channel: "discord", to: "channel:123" }`, `whatsapp:+15551234567` gives `to: "+15551234567"`;
 * each adapter judges its own `to` when it sends (and a channel without an adapter fails there).
 */
export function parseDeliveryTarget(raw: string): DeliveryContext {
  const text = raw.trim();
  const colon = text.indexOf(":");
  const channel = colon > 0 ? text.slice(0, colon).toLowerCase() : "";
  const rest = colon > 0 ? text.slice(colon + 1).trim() : "";
  if (!/^[a-z][a-z0-9_-]*$/.test(channel) || rest === "") {
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `"${raw}" is not a delivery target: write <channel>:<to>, e.g. telegram:123456789, telegram:-1001234567890:topic:42, discord:channel:123, whatsapp:+15551234567, or "last"`,
    );
  }
  const thread = THREAD_SUFFIX.exec(rest);
  return thread ? { channel, to: thread[1]!, threadId: thread[2]! } : { channel, to: rest };
}

/**
 * The target codec of a channel whose `to` is one opaque id with an optional thread: decodes
 * `<to>[:topic:<n>|:thread:<id>]` and encodes back to `<to>[:thread:<id>]`. For the gateway's own
 * client channel and test fakes; platform adapters bring their own codec.
 */
export function opaqueTargetCodec(channel: string): TargetCodec {
  return {
    encode: (target) => (target.threadId !== undefined ? `${target.to}:thread:${target.threadId}` : `${target.to}`),
    decode(text) {
      const rest = text.trim();
      if (!rest)
        throw new DeliveryError(`a ${channel} target needs an id after "${channel}:"`, {
          retryable: false,
          reason: "bad_target",
        });
      const thread = THREAD_SUFFIX.exec(rest);
      return thread ? { channel, to: thread[1]!, threadId: thread[2]! } : { channel, to: rest };
    },
  };
}
