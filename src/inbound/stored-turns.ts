import {
  LeftForReplay,
  type StartOptions,
  type StoredTurn,
  type TurnRun,
  type TurnRunner,
  type TurnSource,
  type TurnStart,
} from "../agents/stored-turn.js";
import type { Logger } from "../logger.js";
import type { GateTimers } from "../delivery/gate-timer.js";
import type { Inbox, PendingInbound } from "./inbox.js";
import { createWriteRetry } from "./retry-write.js";

/** An inbox entry that holds a turn. */
export type StoredEntry = PendingInbound & { startedTurn: StoredTurn };

/** Dependencies of {@link createStoredTurns}. */
export interface StoredTurnsDeps {
  inbox: Pick<Inbox, "claimTurn" | "complete" | "knows">;
  logger: Logger;
  /** the backoff timers of a turn's failed hand-over write; default Node's (tests pass a manual clock's) */
  timers?: GateTimers | undefined;
}

/**
 * Turns that hooks, gateway clients and tools start, kept in their session's inbox like messages:
 * stored (under their dedupe key) before the caller is answered, run by their source's runner,
 * replayed with the same run id after a crash, and marked done once they ended.
 */
export function createStoredTurns(deps: StoredTurnsDeps) {
  const { inbox } = deps;
  const runners = new Map<TurnSource, TurnRunner>();
  // Turns running in this process until they are done (a graceful stop and `core.idle()` wait for them).
  const inFlight = new Set<Promise<void>>();
  const writes = createWriteRetry(deps);

  const launch = (entry: StoredEntry, run: Omit<TurnRun, "runId">) =>
    launchTurn({ deps, runners, inFlight }, entry, run);

  return {
    /** Names the runner of a source's turns; every source registers before the gateway starts (and replays). */
    register(source: TurnSource, runner: TurnRunner): void {
      runners.set(source, runner);
    },

    /** Stores the turn, then runs it; a repeat of its dedupe key runs nothing and answers with the first run. */
    async start(turn: StoredTurn, options: StartOptions = {}): Promise<TurnStart> {
      const claim = await inbox.claimTurn(options.dedupeKey, turn, { runId: options.runId });
      if (claim.status === "done")
        return { status: "done", runId: claim.runId ?? "", sessionKey: claim.sessionKey ?? turn.sessionKey };
      // Stored for the gateway holding its session's partition: it runs there.
      if (claim.status === "forwarded")
        return { status: claim.repeat ? "pending" : "new", runId: claim.runId, sessionKey: claim.sessionKey };
      const { entry } = claim;
      if (claim.status === "new") void launch({ ...entry, startedTurn: turn }, { resumed: false });
      return { status: claim.status, runId: entry.runId, sessionKey: entry.startedTurn?.sessionKey ?? turn.sessionKey };
    },

    /**
     * Runs a stored turn a restart interrupted (or an owner retried) with its run id, `onStart`
     * counting its start on disk; settles when it is done.
     */
    replay: (entry: StoredEntry, onStart: () => Promise<void>): Promise<void> =>
      launch(entry, { resumed: true, onStart }),

    /** True when a turn is stored under `dedupeKey` (pending, done or set aside): a replay finds its next step there. */
    stored: (dedupeKey: string): boolean => inbox.knows(dedupeKey),

    /**
     * Stores what a turn hands over (the next step of a flow), retried with backoff while the
     * gateway runs; after a stop began its turn stays not done (`LeftForReplay`) and the next start replays it.
     */
    untilStored: writes.untilStored,

    /** A stop began: hand-over writes waiting for a retry end, and their turns are left to the next start. */
    stop: writes.stop,

    /** Settles once every turn started in this process has ended and handed over its reply or announce. */
    async idle(): Promise<void> {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}

/**
 * Runs a stored entry's turn; the entry is done when it ends, even when it failed, except when a
 * stop left its hand-over unstored (`LeftForReplay`): the next start replays it.
 */
function launchTurn(
  {
    deps,
    runners,
    inFlight,
  }: { deps: StoredTurnsDeps; runners: Map<TurnSource, TurnRunner>; inFlight: Set<Promise<void>> },
  entry: StoredEntry,
  run: Omit<TurnRun, "runId">,
): Promise<void> {
  const { inbox, logger } = deps;
  const { startedTurn: turn, runId } = entry;
  const runner = runners.get(turn.source);
  const started = runner
    ? runner.run(turn, { runId, ...run, markDone: () => inbox.complete(entry.id) })
    : Promise.reject(new Error(`no runner for turns of source "${turn.source}"`));
  const running = started
    .then(
      () => true,
      (err: unknown) => {
        if (err instanceof LeftForReplay) {
          logger.warn({ id: entry.id, runId, source: turn.source, err }, "stored turn left for the next start");
          return false;
        }
        // A turn that failed is not retried at every start; its runner logged why, or it is logged here.
        logger.error({ id: entry.id, runId, source: turn.source, err }, "stored turn failed");
        return true;
      },
    )
    .then((done) => (done ? inbox.complete(entry.id) : undefined))
    .catch((err: unknown) => logger.error({ id: entry.id, err }, "stored turn not marked done; it will be replayed"));
  inFlight.add(running);
  void running.finally(() => inFlight.delete(running));
  return running;
}

/** The stored turns of a gateway. */
export type StoredTurns = ReturnType<typeof createStoredTurns>;
