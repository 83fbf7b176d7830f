import type { AgentRuntime } from "../agents/agent-runtime.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import { entryDeliveryContext } from "../sessions/delivery-context.js";
import { ANNOUNCE_SKIP, REPLY_SKIP, isSkipToken } from "./skip-tokens.js";
import type { ToolDeps } from "./tool-deps.js";

const STEP_TIMEOUT_MS = 120_000;

/** One side of an agent-to-agent exchange. */
interface Side {
  parsed: ParsedSessionKey;
  agentId: string;
}

/** Everything the background flow after a sessions_send needs. */
export interface A2AFlowInput {
  requester?: Side & { channel?: string };
  target: Side;
  message: string;
  primaryRunId: string;
  primaryReply: string;
  traceId: string;
  /** the hop of the primary message */
  hop: number;
  /** whether an owner started the exchange: every step's tools act with that authority */
  owner: boolean;
}

/** Runs one turn on `side` and returns its own reply text (undefined when it did not end ok). */
async function runStep(
  runtime: AgentRuntime,
  deps: ToolDeps,
  side: Side,
  prompt: string,
  context: string,
  provenance: { sessionKey?: string; traceId: string; hop: number },
  owner = false,
): Promise<string | undefined> {
  const { done } = runtime.enqueue({
    parsed: side.parsed,
    agentId: side.agentId,
    prompt,
    deliver: false,
    extraSystemPrompt: context,
    owner,
    provenance: { kind: "session", ...provenance },
    timeoutMs: STEP_TIMEOUT_MS,
  });
  const run = await done;
  deps.logger.debug(
    { sessionKey: side.parsed.key, runId: run.runId, status: run.status, hop: provenance.hop },
    "agent-to-agent step",
  );
  return run.status === "ok" ? run.text?.trim() || undefined : undefined;
}

/** The two lines every step's context names the sides with. */
interface SideLines {
  requester: string;
  target: string;
}

function sideLines(input: A2AFlowInput, target: Side): SideLines {
  const requester = input.requester
    ? `Agent 1 (requester) session: ${input.requester.parsed.key}.${input.requester.channel ? ` Channel: ${input.requester.channel}.` : ""}`
    : "Agent 1 (requester): the gateway owner.";
  return { requester, target: `Agent 2 (target) session: ${target.parsed.key}.` };
}

function replyStepContext(
  lines: SideLines,
  step: { current: string; other: Side; turn: number; turns: number },
): string {
  return [
    "Agent-to-agent reply step:",
    `Current agent: ${step.current}. Turn ${step.turn} of ${step.turns}.`,
    lines.requester,
    lines.target,
    `The message below comes from the other agent (${step.other.parsed.key}), not from a person.`,
    `If you want to stop the ping-pong, reply exactly "${REPLY_SKIP}".`,
  ].join("\n");
}

/** The reply-back loop: turns alternate until REPLY_SKIP, `maxPingPongTurns` or the hop budget; returns the last hop and reply. */
async function pingPong(
  deps: ToolDeps,
  input: A2AFlowInput,
  target: Side,
  lines: SideLines,
): Promise<{ hop: number; latest: string }> {
  const { maxPingPongTurns: turns, maxHops } = deps.config.session.agentToAgent;
  let hop = input.hop;
  let latest = input.primaryReply;
  if (!input.requester || input.requester.parsed.key === target.parsed.key || turns <= 0) return { hop, latest };
  let [current, other] = [input.requester as Side, target];
  for (let turn = 1; turn <= turns && hop < maxHops; turn++) {
    hop += 1;
    const name = current === target ? "Agent 2 (target)" : "Agent 1 (requester)";
    const context = replyStepContext(lines, { current: name, other, turn, turns });
    const provenance = { sessionKey: other.parsed.key, traceId: input.traceId, hop };
    const reply = await runStep(deps.runtime, deps, current, latest, context, provenance, input.owner);
    if (!reply || isSkipToken(reply, REPLY_SKIP)) break;
    latest = reply;
    [current, other] = [other, current];
  }
  return { hop, latest };
}

function announceContext(input: A2AFlowInput, lines: SideLines, latest: string): string {
  return [
    "Agent-to-agent announce step:",
    lines.requester,
    lines.target,
    `Original request: ${input.message}`,
    `Round 1 reply: ${input.primaryReply}`,
    `Latest reply: ${latest}`,
    `If you want to remain silent, reply exactly "${ANNOUNCE_SKIP}".`,
    "Any other reply will be posted to your chat. After this reply, the agent-to-agent conversation is over.",
  ].join("\n");
}

/** Sends the announce to the target session's chat through the delivery gate, when the session has a route. */
async function deliverAnnounce(deps: ToolDeps, input: A2AFlowInput, target: Side, announce: string): Promise<void> {
  const entry = (await deps.sessions.forAgent(target.agentId)).store.get(target.parsed.key);
  const route = entryDeliveryContext(entry);
  if (!route) {
    deps.logger.info(
      { sessionKey: target.parsed.key },
      "agent-to-agent announce has no chat to go to (the target session has no route)",
    );
    return;
  }
  await deps.deliver({
    sessionKey: target.parsed,
    ...(entry && { entry }),
    target: route,
    text: announce,
    kind: "announce",
    idempotencyKey: `a2a-announce:${input.primaryRunId}`,
  });
}

/**
 * After a sessions_send: the reply-back loop (turns alternate, REPLY_SKIP ends it, at most
 * `maxPingPongTurns`, never past the hop budget), then the announce step in the target, whose reply
 * (unless ANNOUNCE_SKIP) goes to the target's chat through the delivery gate.
 */
export async function runAgentToAgentFlow(deps: ToolDeps, input: A2AFlowInput): Promise<void> {
  const { maxHops } = deps.config.session.agentToAgent;
  const target: Side = { parsed: input.target.parsed, agentId: input.target.agentId };
  const lines = sideLines(input, target);
  const { hop, latest } = await pingPong(deps, input, target, lines);
  if (hop >= maxHops) {
    deps.logger.warn(
      { traceId: input.traceId, hop, maxHops },
      "agent-to-agent chain reached its hop budget; no announce",
    );
    return;
  }
  const announce = await runStep(
    deps.runtime,
    deps,
    target,
    "Agent-to-agent announce step.",
    announceContext(input, lines, latest),
    { sessionKey: input.requester?.parsed.key ?? "gateway", traceId: input.traceId, hop: hop + 1 },
    input.owner,
  );
  if (!announce || isSkipToken(announce, ANNOUNCE_SKIP)) return;
  await deliverAnnounce(deps, input, target, announce);
}
