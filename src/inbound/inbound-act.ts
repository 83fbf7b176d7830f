import type { AgentRuntime } from "../agents/agent-runtime.js";
import { routeOf } from "../agents/agent-runtime.js";
import type { RunRecord } from "../agents/run-registry.js";
import type { CommandOutcome } from "../commands/command-context.js";
import type { CommandInteraction } from "../delivery/channel-adapter.js";
import type { Deliver } from "../delivery/delivery-request.js";
import type { Logger } from "../logger.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import type { AccessDecision } from "./access.js";
import type { createCommandEcho } from "./command-echo.js";
import type { PendingInbound } from "./inbox.js";
import type { InboundDecision } from "./inbound-decision.js";
import type { Pairing } from "./pairing.js";

/** A stored message, routed to its session, with what the access check said about its sender. */
export interface RoutedMessage {
  entry: PendingInbound;
  message: InboundMessage;
  parsed: ParsedSessionKey;
  agentId: string;
  access: AccessDecision;
  /** a replay after a restart, or a retry of a set-aside message */
  resumed: boolean;
  /** the platform interaction of a native command (answered by the finish step, never here) */
  interaction?: CommandInteraction | undefined;
}

/** What acting on a decision started: a command's reply, or a queued turn and its end. */
export type Acted = { reply?: string } | { runId: string; turnDone: Promise<RunRecord> };

/** Dependencies of {@link createAct}. */
export interface ActDeps {
  runtime: Pick<AgentRuntime, "enqueue">;
  deliver: Deliver;
  echo: ReturnType<typeof createCommandEcho>;
  /** DM pairing: a code for an unknown sender; default none */
  pairing?: Pick<Pairing, "onStranger"> | undefined;
  /** counts a replayed turn's start on disk before it runs (the crash-loop guard) */
  recordStart: (entry: PendingInbound) => Promise<void>;
  logger: Logger;
}

/** The idempotency key of a command's reply: the same for a replay of the same message. */
export const commandReplyKey = (entry: PendingInbound) => `${entry.dedupeKey ?? entry.runId}:command`;

/** A stranger's DM reaches nothing, but on a pairing account may earn them a code; a refusal is logged. */
async function ignore(
  deps: ActDeps,
  routed: RoutedMessage,
  decision: Extract<InboundDecision, { kind: "ignore" }>,
): Promise<Acted> {
  const { message, parsed } = routed;
  if (decision.pairing && deps.pairing) await deps.pairing.onStranger(message, parsed);
  if (decision.refused)
    deps.logger.info(
      { sessionKey: parsed.key, sender: message.sender.id, reason: decision.reason },
      "inbound message not allowed",
    );
  return {};
}

/** A command's outcome: kept in the history, and delivered to a platform chat (an interaction is answered by finish). */
async function answer(deps: ActDeps, routed: RoutedMessage, outcome: CommandOutcome, record: boolean): Promise<Acted> {
  const { entry, message, parsed, agentId } = routed;
  const reply = outcome.reply;
  if (record)
    await deps.echo.record({ parsed, agentId, message, id: entry.runId, ...(reply !== undefined && { reply }) });
  const target = routeOf(message);
  // Gateway clients get the reply as the method result and, with every client of the session, as a chat event.
  if (reply && target && !routed.interaction && !routed.access.gatewayClient)
    await deps.deliver({
      sessionKey: parsed,
      target,
      text: reply,
      kind: "reply",
      idempotencyKey: commandReplyKey(entry),
      bypassPolicy: true,
      ...(message.messageId && { replyToMessageId: message.messageId }),
    });
  return reply !== undefined ? { reply } : {};
}

/** Queues the turn on the session's lane; a reset rides on it and is applied when the turn starts. */
function turn(deps: ActDeps, routed: RoutedMessage, decision: Extract<InboundDecision, { kind: "turn" }>): Acted {
  const { entry, message, parsed, agentId, access, resumed } = routed;
  const { runId, done } = deps.runtime.enqueue({
    runId: entry.runId,
    parsed,
    agentId,
    message,
    ...(decision.reset && { reset: decision.reset }),
    // A replay's start is counted on disk before it runs: a turn that kills the process ends up set aside.
    ...(resumed && { resumed: true, onStart: () => deps.recordStart(entry) }),
    provenance: { kind: "channel", channel: message.channel },
    // Session tools act with the sender's authority (docs/tools.md).
    owner: access.owner,
  });
  return { runId, turnDone: done };
}

/** The act step: does what {@link InboundDecision} says, and nothing else (the finish step answers and marks done). */
export function createAct(deps: ActDeps) {
  return async function act(routed: RoutedMessage, decision: InboundDecision): Promise<Acted> {
    if (decision.kind === "ignore") return ignore(deps, routed, decision);
    if (decision.kind === "answer") return answer(deps, routed, decision.outcome, decision.record);
    return turn(deps, routed, decision);
  };
}
