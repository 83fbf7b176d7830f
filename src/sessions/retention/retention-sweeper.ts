import type { Logger } from "../../logger.js";
import type { OpenedAgentSessions } from "../agent-sessions.js";
import { type PrunedItem, pruneSessions } from "./prune-sessions.js";
import type { RetentionPlan } from "./retention-plan.js";

/** Timer functions the sweeper schedules itself with (tests pass a manual clock's). */
export interface SweepTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Dependencies of {@link createRetentionSweeper}. */
export interface RetentionSweeperDeps {
  /** every agent's opened sessions */
  agents: () => Promise<OpenedAgentSessions[]>;
  plan: RetentionPlan;
  logger: Logger;
  now: () => number;
  timers?: SweepTimers;
  /** default: one hour */
  everyMs?: number;
}

/** How often the running gateway applies retention. */
const SWEEP_EVERY_MS = 3_600_000;

const REAL_TIMERS: SweepTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** One log line for what a scheduled pass removed (none when it removed nothing). */
function logRemoved(logger: RetentionSweeperDeps["logger"], items: PrunedItem[]): void {
  if (items.length === 0) return;
  const sessions = items.filter((i) => i.what === "session").map((i) => i.key);
  const archives = items.filter((i) => i.what === "archive").length;
  logger.info({ sessions, archives }, "retention removed old sessions and archived transcripts");
}

/**
 * The gateway's retention: one pass at start, then one every hour; passes never overlap, and a
 * failed pass is logged and tried again at the next one.
 */
export function createRetentionSweeper(deps: RetentionSweeperDeps) {
  const { timers = REAL_TIMERS, everyMs = SWEEP_EVERY_MS } = deps;
  let running: Promise<PrunedItem[]> = Promise.resolve([]);
  let handle: unknown;
  let stopped = true;

  function sweep(options: { dryRun?: boolean; plan?: RetentionPlan } = {}): Promise<PrunedItem[]> {
    const pass = running.then(async () =>
      pruneSessions(await deps.agents(), options.plan ?? deps.plan, { now: deps.now(), dryRun: !!options.dryRun }),
    );
    running = pass.catch(() => []);
    return pass;
  }

  function scheduled(): void {
    sweep().then(
      (items) => logRemoved(deps.logger, items),
      (err: unknown) => deps.logger.warn({ err }, "retention pass failed; tried again at the next one"),
    );
    if (!stopped) handle = timers.setTimeout(scheduled, everyMs);
  }

  return {
    /** Runs a pass now and schedules the next ones. */
    start(): void {
      stopped = false;
      scheduled();
    },
    /** One pass now (the `sessions.prune` method); waits for a pass already running. */
    sweep,
    /** Settles when the pass running now (if any) has ended. */
    settled: (): Promise<void> => running.then(() => undefined),
    /** Stops scheduling and waits for a running pass. */
    async stop(): Promise<void> {
      stopped = true;
      timers.clearTimeout(handle);
      await running;
    },
  };
}
