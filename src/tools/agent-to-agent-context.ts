import { ANNOUNCE_SKIP, REPLY_SKIP } from "./skip-tokens.js";

/** The sides and request of one agent-to-agent flow, as its steps' contexts name them. */
export interface FlowSides {
  requester?: { sessionKey: string; channel?: string | undefined } | undefined;
  target: { sessionKey: string };
  message: string;
  primaryReply: string;
}

/** The two lines every step's context names the sides with. */
function sideLines(flow: FlowSides): [string, string] {
  const { requester } = flow;
  const first = requester
    ? `Agent 1 (requester) session: ${requester.sessionKey}.${requester.channel ? ` Channel: ${requester.channel}.` : ""}`
    : "Agent 1 (requester): the gateway owner.";
  return [first, `Agent 2 (target) session: ${flow.target.sessionKey}.`];
}

/** The system prompt of reply step `turn` of `turns`, run by `current` and answering `other`. */
export function replyStepContext(
  flow: FlowSides,
  step: { current: "requester" | "target"; otherKey: string; turn: number; turns: number },
): string {
  const name = step.current === "target" ? "Agent 2 (target)" : "Agent 1 (requester)";
  return [
    "Agent-to-agent reply step:",
    `Current agent: ${name}. Turn ${step.turn} of ${step.turns}.`,
    ...sideLines(flow),
    `The message below comes from the other agent (${step.otherKey}), not from a person.`,
    `If you want to stop the ping-pong, reply exactly "${REPLY_SKIP}".`,
  ].join("\n");
}

/** The system prompt of the announce step in the target, with the latest reply of the loop. */
export function announceContext(flow: FlowSides, latest: string): string {
  return [
    "Agent-to-agent announce step:",
    ...sideLines(flow),
    `Original request: ${flow.message}`,
    `Round 1 reply: ${flow.primaryReply}`,
    `Latest reply: ${latest}`,
    `If you want to remain silent, reply exactly "${ANNOUNCE_SKIP}".`,
    "Any other reply will be posted to your chat. After this reply, the agent-to-agent conversation is over.",
  ].join("\n");
}
