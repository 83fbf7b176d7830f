import { z } from "zod";
import type { ParsedSessionKey } from "../routing/session-key.js";
import type { Provenance } from "../sessions/transcripts/index.js";
import type { TurnRequest } from "./turn-request.js";

/**
 * Who starts turns that are not platform messages: a webhook, a gateway client's `agent` call, a
 * tool, an agent-to-agent step, a cron job, a sub-agent's spawn, a sub-agent's announce, a stop of a
 * sub-agent's run (`abort`), a notice the session's owner delivers (`notice`: DM pairing's, in
 * `cluster.owners: "many"`).
 */
const TurnSourceSchema = z.enum(["hook", "client", "tool", "a2a", "cron", "spawn", "announce", "abort", "notice"]);
/** The source of a stored turn; its runner runs the turn, the first time and after a restart. */
export type TurnSource = z.infer<typeof TurnSourceSchema>;

/**
 * A turn a hook, a gateway client or a tool starts, as its session's inbox keeps it until the turn
 * has ended: everything a replay after a crash needs, as plain JSON.
 */
export const StoredTurnSchema = z.object({
  source: TurnSourceSchema,
  /** the canonical key of the session the turn runs in */
  sessionKey: z.string().min(1),
  /** what the agent is asked (also what `switchboard inbox list` shows) */
  text: z.string(),
  /** the caller's authority: an owner's turn reaches what an owner may; kept across a replay */
  owner: z.boolean(),
  /** where the turn's input came from, recorded in the transcript */
  provenance: z.custom<Provenance>((value) => typeof value === "object" && value !== null && "kind" in value),
  /** the rest its source's runner needs (a delivery target, a model, ...), checked by the runner when replayed */
  input: z.record(z.string(), z.unknown()),
});
/** A stored turn. */
export type StoredTurn = z.infer<typeof StoredTurnSchema>;

/**
 * What starting a stored turn found: `new` (stored, now running), `pending` (the same dedupe key is
 * stored and not finished: it is that turn) or `done` (that turn ended; nothing runs). `runId` and
 * `sessionKey` are the first turn's.
 */
export interface TurnStart {
  status: "new" | "pending" | "done";
  runId: string;
  sessionKey: string;
}

/** How a turn is started: its dedupe key (a repeat runs nothing) and run id; default none and a new id. */
export interface StartOptions {
  dedupeKey?: string | undefined;
  runId?: string | undefined;
}

/** What a runner asks of the stored turns besides starting one (src/inbound/stored-turns.ts implements it). */
export interface StoredTurnLookup {
  /** true when a turn is stored under `dedupeKey` (pending, done or set aside) */
  stored(dedupeKey: string): boolean;
  /** runs `write` (a store of a turn), retried with backoff while it fails to be written; rejects once a stop begins */
  untilStored<T>(write: () => Promise<T>, what: Record<string, unknown>): Promise<T>;
}

/**
 * Stores a turn in its session's inbox (settles once it is on disk; rejects with `InboxWriteError`
 * when it could not be stored), then runs it with its source's runner. Its run is known to the run
 * registry (`agent.wait`) by the time this settles.
 */
export type StartTurn = (turn: StoredTurn, options?: StartOptions) => Promise<TurnStart>;

/** A run of a stored turn: its run id (fixed when stored), and for a replay the start counted on disk first. */
export interface TurnRun {
  runId: string;
  /** a replay after a restart (or a retry of a set-aside turn) */
  resumed: boolean;
  /** awaited right before the turn runs: a replay counts its start (the crash-loop guard) */
  onStart?: () => Promise<void>;
  /**
   * Marks the inbox entry done now, in the caller's synchronous step (PostgreSQL: the same commit as
   * a run end recorded in that step); a runner that ends a run without running it uses it.
   */
  markDone?: () => Promise<void>;
}

/** How one source runs its stored turns, the first time and after a restart alike. */
export interface TurnRunner {
  /**
   * Queues the turn (known by `run.runId` before the first await) and settles once it has ended and
   * handed over what must outlive it (its reply or announce in the outbox, or the next stored turn
   * of an agent-to-agent flow); the inbox entry is then done.
   */
  run(turn: StoredTurn, run: TurnRun): Promise<void>;
}

/** A stored turn's request for the runtime: its session, text, authority and provenance as stored, the run as started. */
export function storedTurnRequest(
  turn: StoredTurn,
  run: TurnRun,
  session: { parsed: ParsedSessionKey; agentId: string },
  extra: Pick<TurnRequest, "deliver" | "timeoutMs" | "extraSystemPrompt">,
): TurnRequest {
  return {
    runId: run.runId,
    ...session,
    prompt: turn.text,
    provenance: turn.provenance,
    owner: turn.owner,
    deliver: extra.deliver ?? false,
    ...(extra.timeoutMs !== undefined && { timeoutMs: extra.timeoutMs }),
    ...(extra.extraSystemPrompt !== undefined && { extraSystemPrompt: extra.extraSystemPrompt }),
    ...(run.resumed && { resumed: true }),
    ...(run.onStart && { onStart: run.onStart }),
  };
}

/**
 * Thrown by a turn whose next write could not be stored and is not retried now (a stop began while
 * it waited, or a spawn's child record failed): the turn stays not done, the next start replays it.
 */
export class LeftForReplay extends Error {
  constructor(cause: unknown, why = "a stop began before the turn's next write was stored") {
    super(`${why}; the next start replays the turn`, { cause });
  }
}
