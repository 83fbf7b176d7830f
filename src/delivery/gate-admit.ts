import type { Logger } from "../logger.js";
import type { ChannelAdapter } from "./channel-adapter.js";
import { chunkText } from "./chunk-text.js";
import type { DeliveryRequest } from "./delivery-request.js";
import type { DeliveryObserver } from "./item-sender.js";
import type { OutboxItem } from "./outbox-item.js";
import { type SendPolicyInput, resolveSendPolicy } from "./send-policy.js";

/**
 * The gateway's own clients are the owner's window onto the session: what reaches them is shown,
 * whatever sendPolicy says. The one place the delivery path reads `gatewayClients`.
 */
function servesOwner(adapter: ChannelAdapter | undefined): boolean {
  return adapter?.capabilities.gatewayClients === true;
}

/**
 * Whether sendPolicy lets the request out to `target`: a deny is logged (and counted) unless the
 * message answers an owner's command or goes to the gateway's own clients.
 */
export function policyAllows(
  deps: { policy: () => SendPolicyInput["policy"]; logger: Logger; observe?: DeliveryObserver | undefined },
  request: DeliveryRequest,
  target: OutboxItem["target"],
  adapter: ChannelAdapter | undefined,
): boolean {
  const verdict = resolveSendPolicy({
    policy: deps.policy(),
    entry: request.entry,
    key: request.sessionKey,
    channel: target.channel,
  });
  if (verdict.decision !== "deny") return true;
  const audit = {
    sessionKey: request.sessionKey.key,
    channel: target.channel,
    to: target.to,
    kind: request.kind,
    source: verdict.source,
    ruleIndex: verdict.ruleIndex,
  };
  if (request.bypassPolicy || servesOwner(adapter)) {
    deps.logger.info(audit, "sendPolicy deny bypassed: an owner's command, or the gateway's own clients");
    return true;
  }
  deps.logger.info(audit, "delivery denied by sendPolicy");
  deps.observe?.(target, "blocked", "sendPolicy");
  return false;
}

/** The text in pieces within the adapter's limits; a channel without a running adapter keeps it whole (its send fails later). */
export function chunksFor(adapter: ChannelAdapter | undefined, text: string): string[] {
  if (!adapter) return /\S/.test(text) ? [text] : [];
  const { maxTextLength, maxLinesPerMessage } = adapter.capabilities;
  return chunkText(text, maxTextLength, maxLinesPerMessage !== undefined ? { maxLines: maxLinesPerMessage } : {});
}
