import type { Config } from "../config/schema/index.js";
import { ErrorCodes, SwitchboardError } from "../errors.js";
import { type InboundMessage, routeInputFromInbound } from "../routing/inbound-message.js";
import { resolveAgentRoute } from "../routing/resolve-route.js";
import type { KeyedSession, SessionKeyContext } from "../routing/session-key-context.js";
import type { PendingInbound } from "./inbox.js";

/**
 * The session of a stored message: the one its client chose or its stored turn runs in
 * (INVALID_SESSION_KEY if none), else the routing table's.
 */
export function routeStored(
  config: Config,
  keys: SessionKeyContext,
  entry: PendingInbound,
  message: InboundMessage | undefined,
): KeyedSession {
  if (entry.sessionKey !== undefined) return keys.parse(entry.sessionKey);
  if (!message) throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, `inbox entry ${entry.id} names no session`);
  const { parsed, agentId } = resolveAgentRoute(config, routeInputFromInbound(message));
  return { parsed, agentId };
}

/**
 * The session the routing table gives a platform message, before the inbox stores it (so its row
 * knows its session and partition); undefined when it cannot be routed, which its handling reports.
 */
export function routedSessionOf(config: Config, message: InboundMessage): string | undefined {
  try {
    return resolveAgentRoute(config, routeInputFromInbound(message)).parsed.key;
  } catch {
    return undefined;
  }
}
