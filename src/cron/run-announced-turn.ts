import { z } from "zod";
import type { AgentRuntime } from "../agents/agent-runtime.js";
import type { StoredTurn, TurnRun } from "../agents/stored-turn.js";
import type { Deliver } from "../delivery/delivery-request.js";
import { type TargetCodecOf, parseDeliveryTarget } from "../delivery/delivery-target.js";
import { chatErrorText } from "../errors.js";
import type { Logger } from "../logger.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import type { AgentSessionsPool } from "../sessions/agent-sessions.js";
import { entryDeliveryContext } from "../sessions/delivery-context.js";
import type { DeliveryContext } from "../sessions/session-entry.js";
import type { Provenance } from "../sessions/transcripts/index.js";
import { ANNOUNCE_SKIP, isSkipToken } from "../tools/skip-tokens.js";
import type { CronRunOutcome } from "./cron-run-log.js";

/**
 * What automation (cron jobs, webhooks) needs from the gateway: one object, built once by the
 * gateway and shared by cron and the hooks, which each add only their own config.
 */
export interface AutomationDeps {
  runtime: Pick<AgentRuntime, "enqueue">;
  sessions: AgentSessionsPool;
  /** the delivery gate: sendPolicy, chunking, outbox */
  deliver: Deliver;
  /** `agent:<id>:<mainKey>` */
  mainKeyOf: (agentId: string) => string;
  /** each running adapter's target codec, so `announceTo` is read by its channel's adapter */
  targetsOf?: TargetCodecOf;
  /** any spelling of a session key to its canonical form and owning agent (throws for an unreadable key) */
  parseKey: (raw: string) => { parsed: ParsedSessionKey; agentId: string };
  logger: Logger;
  now: () => number;
}

/** One automated turn: where it runs, what it asks, and where its reply is announced. */
export interface AnnouncedTurn {
  runId: string;
  parsed: ParsedSessionKey;
  agentId: string;
  prompt: string;
  /** a new sessionId for this run (isolated cron runs, `hook:<uuid>` sessions) */
  isolated: boolean;
  model?: string | undefined;
  timeoutMs?: number | undefined;
  /** `last` (the agent main session's last route), a target such as `telegram:123`, or none */
  announceTo?: string | undefined;
  provenance: Provenance;
  /** the turn's tools act with an owner's authority (cron jobs: an owner made them; hooks: no) */
  owner: boolean;
  /** a replay after a restart (hook turns are stored in the inbox), its start counted by `onStart` */
  resumed?: boolean | undefined;
  onStart?: (() => Promise<void>) | undefined;
}

/** Where `announceTo` points right now: `last` reads the agent main session's last route. */
async function resolveTarget(deps: AutomationDeps, turn: AnnouncedTurn): Promise<DeliveryContext | undefined> {
  if (!turn.announceTo) return undefined;
  if (turn.announceTo.trim().toLowerCase() !== "last") return parseDeliveryTarget(turn.announceTo, deps.targetsOf);
  const { store } = await deps.sessions.forAgent(turn.agentId);
  return entryDeliveryContext(store.get(deps.mainKeyOf(turn.agentId)));
}

type Outcome = CronRunOutcome;

/** Announces a finished run's reply through the gate: skipped when empty or `ANNOUNCE_SKIP`, no-route when `last` has none. */
async function announce(
  deps: AutomationDeps,
  turn: AnnouncedTurn,
  text: string,
  base: Pick<Outcome, "sessionKey" | "sessionId">,
  entry: Parameters<Deliver>[0]["entry"],
): Promise<Outcome> {
  if (!text.trim() || isSkipToken(text, ANNOUNCE_SKIP))
    return { ...base, status: "ok", delivered: false, delivery: "skipped" };
  // Read after the run: `last` is where the main session was last heard from by now.
  const target = await resolveTarget(deps, turn);
  if (!target) {
    deps.logger.warn(
      { sessionKey: base.sessionKey, runId: turn.runId },
      "announce skipped: the main session has no last route yet",
    );
    return { ...base, status: "ok", delivered: false, delivery: "no-route" };
  }
  const idempotencyKey = `${turn.runId}:announce`;
  const result = await deps.deliver({ sessionKey: turn.parsed, entry, target, text, kind: "announce", idempotencyKey });
  const delivered = result.status === "delivered" || result.status === "queued";
  const error = result.status === "failed" && result.error ? { error: result.error.message } : {};
  return { ...base, status: "ok", delivered, delivery: result.status, ...error };
}

/** Enqueues the turn with its reply kept internal; returns its end. */
function enqueueTurn(deps: AutomationDeps, turn: AnnouncedTurn) {
  return deps.runtime.enqueue({
    runId: turn.runId,
    parsed: turn.parsed,
    agentId: turn.agentId,
    prompt: turn.prompt,
    deliver: false,
    isolated: turn.isolated,
    provenance: turn.provenance,
    owner: turn.owner,
    ...(turn.model && { model: turn.model }),
    ...(turn.timeoutMs && { timeoutMs: turn.timeoutMs }),
    ...(turn.resumed && { resumed: true }),
    ...(turn.onStart && { onStart: turn.onStart }),
  }).done;
}

/**
 * Runs a turn with its reply kept internal, then announces the reply through the delivery gate
 * (so sendPolicy, chunking and the outbox apply). A reply of `ANNOUNCE_SKIP` or nothing at all
 * posts nothing. Never rejects: failures come back as the outcome.
 */
export async function runAnnouncedTurn(deps: AutomationDeps, turn: AnnouncedTurn): Promise<Outcome> {
  const sessionKey = turn.parsed.key;
  try {
    // Enqueued before the first await: the caller may hand out the runId, and `agent.wait` must find it.
    const done = enqueueTurn(deps, turn);
    const run = await done;
    const { store } = await deps.sessions.forAgent(turn.agentId);
    const entry = store.get(sessionKey);
    const base = { sessionKey, ...(entry && { sessionId: entry.sessionId }) };
    if (run.status !== "ok") {
      const status = run.status === "queued" || run.status === "running" ? "error" : run.status;
      return { ...base, status, error: run.error ?? run.status, delivered: false, delivery: "none" };
    }
    if (!turn.announceTo) return { ...base, status: "ok", delivered: false, delivery: "none" };
    return await announce(deps, turn, run.text ?? "", base, entry);
  } catch (err) {
    return {
      sessionKey,
      status: "error",
      // a known error keeps its message; a bug is logged whole here and recorded as an apology with its error id
      error: chatErrorText(err, deps.logger, "announced turn crashed", { sessionKey, runId: turn.runId }),
      delivered: false,
      delivery: "none",
    };
  }
}

/** What a stored automated turn (a hook's, a cron run's) keeps besides its session, text and authority. */
export const AnnouncedTurnInputSchema = z.object({
  /** a new sessionId for its run (isolated cron runs, `hook:<uuid>` sessions) */
  isolated: z.boolean(),
  model: z.string().optional(),
  timeoutMs: z.number().int().positive().optional(),
  /** `last`, a target such as `telegram:123`, or none (the reply stays internal) */
  announceTo: z.string().optional(),
});

/** Runs a stored automated turn, first or replayed, with its input as stored: {@link runAnnouncedTurn}. */
export function runStoredAnnouncedTurn(
  deps: AutomationDeps,
  turn: StoredTurn,
  run: TurnRun,
  input: z.infer<typeof AnnouncedTurnInputSchema>,
): Promise<Outcome> {
  const { parsed, agentId } = deps.parseKey(turn.sessionKey);
  return runAnnouncedTurn(deps, {
    runId: run.runId,
    parsed,
    agentId,
    prompt: turn.text,
    isolated: input.isolated,
    model: input.model,
    timeoutMs: input.timeoutMs,
    announceTo: input.announceTo,
    provenance: turn.provenance,
    owner: turn.owner,
    resumed: run.resumed,
    onStart: run.onStart,
  });
}
