import type { AgentRuntime } from "../agents/agent-runtime.js";
import { routeOf } from "../agents/agent-runtime.js";
import type { RunRecord } from "../agents/run-registry.js";
import type { TurnRequest } from "../agents/agent-runtime.js";
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
  /** a replay of a collected or steered turn: the other messages tied to its run (`entry.turn`), in order */
  followers?: Array<{ entry: PendingInbound; message: InboundMessage }>;
}

/** What acting on a decision started: a command's reply, or a queued turn and its end. */
export type Acted = { reply?: string } | { runId: string; turnDone: Promise<RunRecord> };

/** Dependencies of {@link createAct}. */
export interface ActDeps {
  runtime: Pick<AgentRuntime, "offer">;
  deliver: Deliver;
  echo: ReturnType<typeof createCommandEcho>;
  /** DM pairing: a code for an unknown sender; default none */
  pairing?: Pick<Pairing, "onStranger"> | undefined;
  /** counts a replayed turn's start on disk before it runs (the crash-loop guard) */
  recordStart: (entry: PendingInbound) => Promise<void>;
  /** ties stored messages to the run of the turn that answers them (a collected or steered turn) */
  bind: (entryIds: string[], runId: string) => Promise<void>;
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

/** The turn a stored message alone would be; a reset rides on it and is applied when the turn starts. */
function requestOf(routed: RoutedMessage, entry: PendingInbound, message: InboundMessage): TurnRequest {
  const { parsed, agentId, access } = routed;
  return {
    runId: entry.runId,
    parsed,
    agentId,
    message,
    provenance: { kind: "channel", channel: message.channel },
    // Session tools act with the sender's authority (docs/tools.md).
    owner: access.owner,
  };
}

/** Offers the message to its session's queue (session.queue); a replayed turn's messages are those tied to its run. */
async function turn(
  deps: ActDeps,
  routed: RoutedMessage,
  decision: Extract<InboundDecision, { kind: "turn" }>,
): Promise<Acted> {
  const { entry, message, resumed } = routed;
  const followers = routed.followers ?? [];
  const request = {
    ...requestOf(routed, entry, message),
    ...(decision.reset && { reset: decision.reset }),
    // A replay's start is counted on disk before it runs: a turn that kills the process ends up set aside.
    ...(resumed && {
      resumed: true,
      onStart: async () => {
        for (const e of [entry, ...followers.map((f) => f.entry)]) await deps.recordStart(e);
      },
    }),
  };
  const replay = entry.turn && {
    runId: entry.turn,
    followers: followers.map((f) => ({ entryId: f.entry.id, request: requestOf(routed, f.entry, f.message) })),
  };
  const { runId, done } = await deps.runtime.offer({
    entryId: entry.id,
    request,
    bind: deps.bind,
    ...(resumed && replay && { replay }),
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
