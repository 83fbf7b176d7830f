import { randomUUID } from "node:crypto";
import { z } from "zod";
import { type RunRecord, isFinalStatus } from "../agents/run-registry.js";
import { storedRunId } from "../agents/uuid-v5.js";
import type { SendTurnInput } from "./sessions-send-turn.js";
import { type ResolvedTarget, resolveTarget } from "./session-access.js";
import type { ToolDeps } from "./tool-deps.js";
import { type ToolCaller, ToolFailure, defineTool, provenanceOf } from "./tool-definition.js";

const DELIVERY = { status: "pending", mode: "announce" } as const;

/** The system prompt line block that tells the target the message comes from another agent. */
function contextFor(caller: ToolCaller, targetKey: string): string {
  return [
    "Agent-to-agent message context:",
    caller.sessionKey
      ? `Agent 1 (requester) session: ${caller.sessionKey.key}.`
      : "Agent 1 (requester): the gateway owner.",
    caller.origin ? `Agent 1 (requester) channel: ${caller.origin.channel}.` : undefined,
    `Agent 2 (target) session: ${targetKey}.`,
    "The user message of this turn comes from that agent, not from a person.",
  ]
    .filter(Boolean)
    .join("\n");
}

/**
 * Stores the message's turn in the target's inbox (a crash replays it) and starts it; a replayed
 * call (the same callId) is that stored turn, and runs nothing new.
 */
function storeSend(
  deps: ToolDeps,
  caller: ToolCaller,
  send: { target: ResolvedTarget; message: string; hop: number; traceId: string },
) {
  const { target, hop, traceId } = send;
  const input: SendTurnInput = {
    extraSystemPrompt: contextFor(caller, target.parsed.key),
    traceId,
    hop,
    ...(caller.sessionKey && {
      requester: {
        sessionKey: caller.sessionKey.key,
        agentId: caller.agentId,
        ...(caller.origin && { channel: caller.origin.channel }),
      },
    }),
  };
  const turn = {
    source: "tool" as const,
    sessionKey: target.parsed.key,
    text: send.message,
    owner: caller.owner ?? false,
    provenance: provenanceOf(caller, hop, traceId),
    input,
  };
  if (caller.callId === undefined) return deps.startTurn(turn);
  // Named by its key (as every stored turn with one): the run id is the same on every gateway.
  const dedupeKey = `tool:${caller.callId}`;
  return deps.startTurn(turn, { dedupeKey, runId: storedRunId("tool", deps.config.state.postgres.schema, dedupeKey) });
}

/**
 * The target run's end: `runs.waitFor` also finds a run this process does not hold (on PostgreSQL
 * its `run_results` row, woken by NOTIFY: it ended before a takeover, or ends on the new owner); a
 * turn already done (a replayed call) is looked up, and "unknown" when no record of it is left.
 */
async function waitForReply(
  deps: ToolDeps,
  caller: ToolCaller,
  send: { runId: string; done: boolean; timeoutSeconds: number },
): Promise<RunRecord | "unknown" | undefined> {
  if (send.done) {
    const found = await deps.runs.find(send.runId);
    if (!found) return "unknown";
    if (isFinalStatus(found.status)) return found;
  }
  // The caller's chat slot is given back while it waits: the target's turn may be queued behind a chat turn waiting for one.
  const wait = () => deps.runs.waitFor(send.runId, send.timeoutSeconds * 1000);
  return caller.runId ? deps.runtime.waitOutsideSlot(caller.runId, wait) : wait();
}

/** The tool's answer for the target run's end (undefined: not within the timeout). */
function outcomeOf(run: RunRecord | undefined, send: { runId: string; sessionKey: string; timeoutSeconds: number }) {
  const { runId, sessionKey } = send;
  if (!run)
    return {
      runId,
      status: "timeout",
      error: `no reply within ${send.timeoutSeconds}s; the run goes on (sessions_history shows its answer later)`,
      sessionKey,
    };
  if (run.status !== "ok")
    return { runId, status: "error", error: run.error ?? `the target run ended ${run.status}`, sessionKey };
  return { runId, status: "ok", reply: run.text ?? "", sessionKey, delivery: DELIVERY };
}

/**
 * `sessions_send`: a message into another session, with agent-to-agent context and provenance,
 * stored in the target session's inbox first (so a crash replays its turn). `timeoutSeconds: 0`
 * returns `accepted` once stored; otherwise it waits on the server for the target run's own reply
 * (`ok`), or returns `timeout` with `error` (the run goes on) or `error`. Then the reply-back loop
 * and the announce follow, each step a stored turn (`agent-to-agent.ts`).
 */
export const sessionsSendTool = defineTool({
  name: "sessions_send",
  description: "Send a message into another session (agent-to-agent). Waits for the reply unless timeoutSeconds is 0.",
  input: z.strictObject({
    sessionKey: z
      .string()
      .trim()
      .min(1)
      .describe('target session key from sessions_list (e.g. "agent:ops:main") or a sessionId'),
    message: z.string().trim().min(1).describe("the message for the other agent"),
    timeoutSeconds: z
      .number()
      .min(0)
      .max(3600)
      .optional()
      .describe("seconds to wait for the reply; 0 = do not wait (default 30)"),
  }),
  async run(input, caller, deps: ToolDeps) {
    const target = await resolveTarget(deps, caller, input.sessionKey);
    if (caller.sessionKey?.key === target.parsed.key)
      throw new ToolFailure("error", "a session cannot send to itself; answer directly instead");
    const traceId = caller.trace?.traceId ?? randomUUID();
    const hop = (caller.trace?.hop ?? 0) + 1;
    const { maxHops } = deps.config.session.agentToAgent;
    if (hop > maxHops) {
      throw new ToolFailure(
        "error",
        `hop budget exhausted: this agent-to-agent chain already passed ${hop - 1} messages (session.agentToAgent.maxHops is ${maxHops})`,
        { sessionKey: target.displayKey },
      );
    }
    const started = await storeSend(deps, caller, { target, message: input.message, hop, traceId });
    const { runId } = started;
    const timeoutSeconds = Math.floor(input.timeoutSeconds ?? 30);
    if (timeoutSeconds === 0) return { runId, status: "accepted", sessionKey: target.displayKey, delivery: DELIVERY };
    const run = await waitForReply(deps, caller, { runId, done: started.status === "done", timeoutSeconds });
    // A turn that ended where no record of it is left (local files, before a restart): stored, no reply to give.
    if (run === "unknown") return { runId, status: "accepted", sessionKey: target.displayKey, delivery: DELIVERY };
    return outcomeOf(run, { runId, sessionKey: target.displayKey, timeoutSeconds });
  },
});
