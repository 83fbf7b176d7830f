import { z } from "zod";
import { type StoredTurn, type TurnRunner, storedTurnRequest } from "../agents/stored-turn.js";
import { storedRunId } from "../agents/uuid-v5.js";
import { parseSessionKey } from "../routing/parse-session-key.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import { entryDeliveryContext } from "../sessions/delivery-context.js";
import { announceContext, replyStepContext } from "./agent-to-agent-context.js";
import { ANNOUNCE_SKIP, REPLY_SKIP, isSkipToken } from "./skip-tokens.js";
import type { ToolDeps } from "./tool-deps.js";

const STEP_TIMEOUT_MS = 120_000;
const ANNOUNCE_PROMPT = "Agent-to-agent announce step.";

const SideSchema = z.object({ sessionKey: z.string(), agentId: z.string() });

/** What every step of one flow carries: the sides, the request and the primary run (whose id keys the steps). */
const FlowSchema = z.object({
  /** absent: the gateway owner sent the message (no reply-back steps) */
  requester: SideSchema.extend({ channel: z.string().optional() }).optional(),
  target: SideSchema,
  message: z.string(),
  primaryRunId: z.string(),
  primaryReply: z.string(),
  traceId: z.string(),
});
/** One agent-to-agent flow after a sessions_send. */
export type A2AFlow = z.infer<typeof FlowSchema>;

/** A stored step's input: the flow, which step (reply step n, odd n in the requester, or the announce) and its context. */
const StepInputSchema = z.object({
  flow: FlowSchema,
  step: z.union([z.number().int().min(1), z.literal("announce")]),
  /** the hop of this step's message */
  hop: z.number().int().min(0),
  extraSystemPrompt: z.string(),
});
type StepInput = z.infer<typeof StepInputSchema>;

/** Where the flow stands after a step: the next reply step's number, the hop and reply so far, and whether the loop ended. */
interface FlowPoint {
  turn: number;
  hop: number;
  latest: string;
  ended: boolean;
}

/** A stored key and the agent that owns it (the default agent for a key that names none). */
export function sideOf(deps: ToolDeps, key: string): { parsed: ParsedSessionKey; agentId: string } {
  const parsed = parseSessionKey(key, deps.keys);
  if (!parsed) throw new Error(`stored agent-to-agent turn names "${key}", which is not a session key`);
  return { parsed, agentId: "agentId" in parsed ? parsed.agentId : deps.keys.defaultAgentId };
}

/** The dedupe key of a step: one per primary run and step, so a replay stores and runs each once. */
const stepKey = (flow: Pick<A2AFlow, "primaryRunId">, step: number | "announce") => `a2a:${flow.primaryRunId}:${step}`;

/**
 * On a replay: true when the step after `after` (reply step `after + 1`, or the announce) is already
 * stored, so the crash came after this turn handed its flow on; it then finishes without running again.
 */
export function nextStepStored(deps: ToolDeps, primaryRunId: string, after: number): boolean {
  const flow = { primaryRunId };
  return deps.turns.stored(stepKey(flow, after + 1)) || deps.turns.stored(stepKey(flow, "announce"));
}

/**
 * Stores one step as a turn of source `a2a` in its session's inbox (settles once on disk), and
 * starts it; its run id is derived from its dedupe key, so every gateway names a step's run alike.
 */
async function storeStep(
  deps: ToolDeps,
  flow: A2AFlow,
  step: { n: number | "announce"; sessionKey: string; text: string; from: string; hop: number; context: string },
  owner: boolean,
): Promise<void> {
  const input: StepInput = { flow, step: step.n, hop: step.hop, extraSystemPrompt: step.context };
  const turn: StoredTurn = {
    source: "a2a",
    sessionKey: step.sessionKey,
    text: step.text,
    owner,
    provenance: { kind: "session", sessionKey: step.from, traceId: flow.traceId, hop: step.hop },
    input,
  };
  const dedupeKey = stepKey(flow, step.n);
  const runId = storedRunId("a2a", deps.config.state.postgres.schema, dedupeKey);
  // A storage blip does not end the flow: retried while the gateway runs, else the next start replays this turn.
  const store = () => deps.startTurn(turn, { dedupeKey, runId });
  await deps.turns.untilStored(store, { dedupeKey, traceId: flow.traceId });
}

/**
 * Stores the flow's next step: reply step `at.turn` (the sides alternate, the requester first) while
 * the loop goes on (no REPLY_SKIP, at most `maxPingPongTurns`, within the hop budget), else the
 * announce in the target, unless the hop budget is spent.
 */
export async function continueFlow(deps: ToolDeps, flow: A2AFlow, at: FlowPoint, owner: boolean): Promise<void> {
  const { maxPingPongTurns: turns, maxHops } = deps.config.session.agentToAgent;
  const { requester, target } = flow;
  if (requester && requester.sessionKey !== target.sessionKey && !at.ended && at.turn <= turns && at.hop < maxHops) {
    const [current, other] = at.turn % 2 === 1 ? [requester, target] : [target, requester];
    const context = replyStepContext(flow, {
      current: current === target ? "target" : "requester",
      otherKey: other.sessionKey,
      turn: at.turn,
      turns,
    });
    const step = { n: at.turn, sessionKey: current.sessionKey, text: at.latest, from: other.sessionKey };
    return storeStep(deps, flow, { ...step, hop: at.hop + 1, context }, owner);
  }
  if (at.hop >= maxHops) {
    deps.logger.warn(
      { traceId: flow.traceId, hop: at.hop, maxHops },
      "agent-to-agent chain reached its hop budget; no announce",
    );
    return;
  }
  const from = requester?.sessionKey ?? "gateway";
  const context = announceContext(flow, at.latest);
  const step = { n: "announce" as const, sessionKey: target.sessionKey, text: ANNOUNCE_PROMPT, from };
  return storeStep(deps, flow, { ...step, hop: at.hop + 1, context }, owner);
}

/**
 * Sends the announce to the target session's chat through the delivery gate, when the session has a
 * route; its outbox id is the announce step's `<runId>:announce`, so a replay finds it out and runs nothing.
 */
async function deliverAnnounce(deps: ToolDeps, flow: A2AFlow, runId: string, announce: string): Promise<void> {
  const target = sideOf(deps, flow.target.sessionKey);
  const entry = (await deps.sessions.forAgent(flow.target.agentId)).store.get(target.parsed.key);
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
    idempotencyKey: `${runId}:announce`,
  });
}

/**
 * Runs a stored agent-to-agent step, first or replayed: its turn, then (before it settles) the next
 * step stored, or for the announce step its reply (unless ANNOUNCE_SKIP) in the outbox. A crash
 * anywhere resumes at the first step not done; a step already done, or whose next step is stored, never runs again.
 */
export function agentToAgentRunner(deps: ToolDeps): TurnRunner {
  return {
    async run(turn, run) {
      const { flow, step, hop, extraSystemPrompt } = StepInputSchema.parse(turn.input);
      if (run.resumed && step !== "announce" && nextStepStored(deps, flow.primaryRunId, step)) return;
      const inRequester = step !== "announce" && step % 2 === 1 && flow.requester;
      const side = { parsed: sideOf(deps, turn.sessionKey).parsed, agentId: (inRequester || flow.target).agentId };
      const request = storedTurnRequest(turn, run, side, { extraSystemPrompt, timeoutMs: STEP_TIMEOUT_MS });
      const ended = await deps.runtime.enqueue(request).done;
      const fields = { sessionKey: turn.sessionKey, runId: run.runId, status: ended.status, hop, step };
      deps.logger.debug(fields, "agent-to-agent step");
      const reply = ended.status === "ok" ? ended.text?.trim() || undefined : undefined;
      if (step === "announce") {
        if (reply && !isSkipToken(reply, ANNOUNCE_SKIP)) await deliverAnnounce(deps, flow, run.runId, reply);
        return;
      }
      // No reply or REPLY_SKIP ends the loop; the announce then sees the reply before it (this step's prompt).
      const latest = reply && !isSkipToken(reply, REPLY_SKIP) ? reply : undefined;
      const at = { turn: step + 1, hop, latest: latest ?? turn.text, ended: latest === undefined };
      await continueFlow(deps, flow, at, turn.owner);
    },
  };
}
