import type { InboundMessage } from "../routing/inbound-message.js";
import type { DeliveryContext } from "../sessions/session-entry.js";
import type { ToolContext, TurnRequest } from "./turn-request.js";

/** The chat a message came from, as a delivery target. */
export function routeOf(message: InboundMessage | undefined): DeliveryContext | undefined {
  if (!message) return undefined;
  return {
    channel: message.channel,
    to: message.chat.id,
    accountId: message.accountId,
    ...(message.chat.threadId && { threadId: message.chat.threadId }),
  };
}

/**
 * Where a turn's reply and notices go: the request's own target, else the chat its message came
 * from; undefined keeps the turn internal. Worked out once per turn, when the turn is queued.
 */
export function replyTargetOf(request: TurnRequest): DeliveryContext | undefined {
  return request.deliver === false ? undefined : (request.deliver ?? routeOf(request.message));
}

/** What the turn's tools are told: its session, its chat (the reply target, else the message's), its trace. */
export function toolContextOf(request: TurnRequest, runId: string, target: DeliveryContext | undefined): ToolContext {
  const { provenance } = request;
  const origin = target ?? routeOf(request.message);
  return {
    agentId: request.agentId,
    sessionKey: request.parsed,
    runId,
    owner: request.owner ?? false,
    ...(origin && { origin }),
    ...(provenance?.traceId && { trace: { traceId: provenance.traceId, hop: provenance.hop ?? 0 } }),
  };
}
