import { DeliveryError, type TargetCodec } from "./channel-adapter.js";
import { ErrorCodes, SwitchboardError } from "../errors.js";
import type { DeliveryContext } from "../sessions/session-entry.js";

const THREAD_SUFFIX = /^(.+?):(?:topic|thread):([^:]+)$/i;

/** The target codec of a channel's running adapter; undefined when no adapter serves that channel. */
export type TargetCodecOf = (channel: string) => TargetCodec | undefined;

/**
 * Reads an announce target written as `<channel>:<rest>` into a delivery context. The core reads
 * only the channel name; the rest is decoded by that channel's adapter (its {@link TargetCodec}):
 * `telegram:-1001234:topic:42` gives `{ channel: "telegram", to: "-1001234", threadId: "42" }`, and
 * a text the adapter cannot read is refused here with the forms the adapter accepts. A channel with
 * no running adapter (a job written before its channel is set up) gets the opaque reading,
 * `<to>[:topic:<n>|:thread:<id>]`, and fails at send time if the channel never comes up; with
 * `running` (a webhook, delivered now) such a target is refused instead.
 */
export function parseDeliveryTarget(
  raw: string,
  codecOf?: TargetCodecOf,
  options: { running?: boolean } = {},
): DeliveryContext {
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
  const running = codecOf?.(channel);
  if (!running && options.running)
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `"${raw}" names ${channel}, which this gateway does not run: set up channels.${channel} in the config, or deliver to a channel it runs (or "last")`,
    );
  const codec = running ?? opaqueTargetCodec(channel);
  try {
    return { ...codec.decode(rest), channel };
  } catch (err) {
    if (err instanceof DeliveryError && err.reason === "bad_target")
      throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, `"${raw}" is not a ${channel} target: ${err.message}`, {
        cause: err,
      });
    throw err;
  }
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
