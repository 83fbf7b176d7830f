// A cron run as a stored turn (docs/automation.md "Failures and restarts"): the run is in its
// session's inbox under `cron:<jobId>:<due time>` before it runs, replayed under the same run id
// after a crash, and the scheduler reads its outcome from the run, wherever it ran.
import { z } from "zod";
import { type RunRecord, type RunRegistry, isFinalStatus } from "../agents/run-registry.js";
import type { StoredTurn, TurnRun, TurnRunner } from "../agents/stored-turn.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import type { CronJob } from "./cron-job.js";
import type { CronRunOutcome, CronTrigger } from "./cron-run-log.js";
import { AnnouncedTurnInputSchema, type AutomationDeps, runStoredAnnouncedTurn } from "./run-announced-turn.js";

/** How long one wait for a run another part of the gateway runs lasts before the run is looked up again. */
const WAIT_SLICE_MS = 60_000;

/** The dedupe key of a job's run for one due time (a manual run: the time it was asked for). */
export function cronDedupeKey(jobId: string, dueAt: number, trigger: CronTrigger): string {
  return trigger === "manual" ? `cron:${jobId}:manual-${dueAt}` : `cron:${jobId}:${dueAt}`;
}

/** What a stored cron turn keeps: its job, and the job's turn settings as they were when it fired. */
const CronTurnInputSchema = AnnouncedTurnInputSchema.extend({ jobId: z.string() });

/** The stored turn of one run of `job` in its session. */
export function cronTurn(job: CronJob, session: { parsed: ParsedSessionKey; isolated: boolean }): StoredTurn {
  const input = {
    jobId: job.id,
    isolated: session.isolated,
    model: job.model,
    timeoutMs: job.timeoutSeconds === undefined ? undefined : job.timeoutSeconds * 1000,
    announceTo: job.delivery.mode === "announce" ? job.delivery.to : undefined,
  };
  return {
    source: "cron",
    sessionKey: session.parsed.key,
    text: job.message,
    // Only owners (gateway clients, the CLI, /cron) create jobs.
    owner: true,
    provenance: { kind: "system", channel: "cron" },
    input: Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)),
  };
}

/** How many outcomes of cron turns run here are kept for a scheduler that asks late (cron runs are few). */
const KEPT_OUTCOMES = 256;

/**
 * The outcomes of the cron turns this process runs, by run id: the announce's verdict
 * (delivered, denied, no route...), which a run's end does not carry.
 */
export function createCronOutcomes() {
  const outcomes = new Map<string, Promise<CronRunOutcome>>();
  return {
    /** A cron turn started here (first run or replay): its outcome once announced. */
    begin(runId: string, outcome: Promise<CronRunOutcome>): void {
      outcomes.delete(runId);
      outcomes.set(runId, outcome);
      for (const oldest of outcomes.keys()) {
        if (outcomes.size <= KEPT_OUTCOMES) break;
        outcomes.delete(oldest);
      }
    },
    get: (runId: string): Promise<CronRunOutcome> | undefined => outcomes.get(runId),
  };
}

/** The cron turns' outcomes of a gateway. */
export type CronOutcomes = ReturnType<typeof createCronOutcomes>;

/** The runs a cron runner ends without running them (a replay of a removed job). */
export type CronRunEnds = Pick<RunRegistry, "get" | "create" | "finish">;

/**
 * Ends a replayed run whose job was removed without running it: `aborted` (a stop the owner asked
 * for by removing the job; run ends have no "skipped"), so `agent.wait` and the scheduler get an end.
 * The end and the inbox entry's done are queued in one step: on PostgreSQL one commit.
 */
function endRemovedJobRun(deps: AutomationDeps, runs: CronRunEnds, turn: StoredTurn, run: TurnRun, jobId: string) {
  const fields = { jobId, runId: run.runId, sessionKey: turn.sessionKey };
  deps.logger.warn(fields, "cron job removed since this run was stored: the stored run is not replayed");
  if (!runs.get(run.runId)) runs.create(run.runId, turn.sessionKey);
  runs.finish(run.runId, { status: "aborted", error: `cron job ${jobId} was removed; this run was not replayed` });
  return run.markDone?.();
}

/**
 * The runner of stored cron turns, first run or replay; each outcome is kept for the scheduler. A
 * replay whose job was removed meanwhile (`cron.remove` while the run was in progress, then a
 * crash) does not run: the owner removed the job so that it would not run again, and a replay runs
 * a stale copy of it. It is logged, its run ends as aborted, and its inbox entry is done.
 */
export function cronTurnRunner(
  deps: AutomationDeps,
  outcomes: CronOutcomes,
  cron: { jobExists: (jobId: string) => boolean; runs: CronRunEnds },
): TurnRunner {
  return {
    async run(turn, run) {
      const jobId = turn.input.jobId;
      if (run.resumed && typeof jobId === "string" && !cron.jobExists(jobId))
        return endRemovedJobRun(deps, cron.runs, turn, run, jobId);
      // Queued before the first await (the run is known by its id at once); a bad input rejects.
      const outcome = new Promise<CronRunOutcome>((resolve) =>
        resolve(runStoredAnnouncedTurn(deps, turn, run, CronTurnInputSchema.parse(turn.input))),
      );
      outcomes.begin(run.runId, outcome);
      await outcome;
    },
  };
}

/** What reading a cron run's outcome needs. */
export interface CronOutcomeDeps {
  outcomes: CronOutcomes;
  runs: Pick<RunRegistry, "find" | "waitFor">;
  /** whether an outbox item of this id exists (the announce handed over) */
  handedOver: (id: string) => boolean;
  /** whether the inbox marked the stored turn of this run done (it ran; kept as long as its dedupe key) */
  handledRun?: ((runId: string) => boolean) | undefined;
  /**
   * On PostgreSQL: the schema's word on a run's announce, for a run another gateway ran (`cluster.owners:
   * "many"`: forwarded to its session's owner): `pending` while its inbox entry is not done yet.
   */
  announceOf?: ((runId: string) => Promise<{ pending: boolean; announced: boolean }>) | undefined;
}

/** How often the announce of a run another gateway ran is looked for while that gateway is not done with the run. */
const ANNOUNCE_LOOK_MS = 100;

/**
 * Whether a run's announce was handed over: in this gateway's outbox, else (a run another gateway
 * ran) in the schema's, read once that gateway is done with the run (its announce comes after its
 * end), for at most {@link WAIT_SLICE_MS}.
 */
async function announcedAnywhere(deps: CronOutcomeDeps, runId: string, closed: () => boolean): Promise<boolean> {
  if (deps.handedOver(`${runId}:announce`) || !deps.announceOf) return deps.handedOver(`${runId}:announce`);
  const until = Date.now() + WAIT_SLICE_MS;
  for (;;) {
    const seen = await deps.announceOf(runId);
    // Its inbox entry is pending here (a replay of this gateway's): the replay's outcome answers.
    const replayed = deps.outcomes.get(runId) !== undefined;
    if (seen.announced || !seen.pending || replayed || closed() || Date.now() > until) return seen.announced;
    await new Promise((resolve) => setTimeout(resolve, ANNOUNCE_LOOK_MS));
  }
}

/** A run's end as a cron outcome, when the announce's own verdict is not known here: its outbox item tells. */
async function outcomeOfEnd(deps: CronOutcomeDeps, run: RunRecord, closed: () => boolean): Promise<CronRunOutcome> {
  const announced = await announcedAnywhere(deps, run.runId, closed);
  return {
    sessionKey: run.sessionKey,
    status: run.status === "queued" || run.status === "running" ? "error" : run.status,
    ...(run.error !== undefined && { error: run.error }),
    delivered: announced,
    delivery: announced ? "queued" : "none",
  };
}

/** The outcome of a run whose end nobody knows any more, when its announce is in the outbox (undefined otherwise). */
function announcedEarlier(deps: CronOutcomeDeps, runId: string): CronRunOutcome | undefined {
  if (!deps.handedOver(`${runId}:announce`)) return undefined;
  return { status: "ok", delivered: true, delivery: "queued" };
}

/**
 * The outcome of a run the inbox marked done whose end and announce nobody knows any more (a
 * restart on local files between its end and its outcome's record): it ran, so it is not run again.
 */
function ranUnrecorded(deps: CronOutcomeDeps, runId: string): CronRunOutcome | undefined {
  if (!deps.handledRun?.(runId)) return undefined;
  return { status: "ok", delivered: false, delivery: "none" };
}

/**
 * The outcome of a cron run: from the turn run here, else from the run's end (`runs.waitFor`:
 * memory, or on PostgreSQL its `run_results` row); undefined when nothing holds the run (it was
 * never stored, or its end is not known) or once `closed()`.
 */
export async function cronOutcomeOf(
  deps: CronOutcomeDeps,
  runId: string,
  closed: () => boolean,
): Promise<CronRunOutcome | undefined> {
  const here = deps.outcomes.get(runId);
  if (here) return here;
  while (!closed()) {
    const run = await deps.runs.find(runId);
    // Its end forgotten (a restart on local files), but its announce is out or its turn done: it ran.
    if (!run) return announcedEarlier(deps, runId) ?? ranUnrecorded(deps, runId);
    if (isFinalStatus(run.status)) {
      const ended = await outcomeOfEnd(deps, run, closed);
      return deps.outcomes.get(runId) ?? ended;
    }
    await deps.runs.waitFor(runId, WAIT_SLICE_MS);
    // A replay started here since: its outcome carries the announce's verdict.
    const started = deps.outcomes.get(runId);
    if (started) return started;
  }
  return undefined;
}
