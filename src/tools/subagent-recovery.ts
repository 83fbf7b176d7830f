import type { GateTimers } from "../delivery/gate-timer.js";
import { BACKGROUND_RETRY, retryDelay } from "../delivery/retry-delay.js";
import { type SubagentTable, announceRecord, archiveRecord, saveRecord } from "./subagent-lifecycle.js";

/**
 * Records how a run left behind ended: an orphaned run as an error, a run whose stop was asked as
 * stopped. A run still `queued` never started: its spawn turn, replayed from the child's inbox, runs it.
 */
async function recordLeftBehind(t: SubagentTable, runId: string): Promise<void> {
  const record = t.records.get(runId);
  if (record?.state === "running" && record.stopAskedAt !== undefined) {
    const { queued: _queued, ...asked } = record;
    await saveRecord(t, { ...asked, state: "ended", outcome: "stopped", endedAt: record.stopAskedAt });
  } else if (record?.state === "running" && !record.queued) {
    await saveRecord(t, {
      ...record,
      state: "ended",
      outcome: "error",
      endedAt: t.deps.now(),
      error: "the gateway restarted while this sub-agent was running",
    });
  }
}

/**
 * For the runs `runIds` (those stored when the table opened, or adopted with their partition): runs
 * that a restart orphaned are announced as errors; ended runs whose announce was not handed over
 * are announced now (see `recordLeftBehind`). A run another recovery is working on is left to it.
 * Once `stopping()` says so it starts no further run's announce (a turn): the next start does them.
 * A failed write, or any failed announce (after the others were tried), fails the whole attempt;
 * a later attempt skips the runs already announced.
 */
async function recoverSubagents(t: SubagentTable, runIds: string[], stopping: () => boolean): Promise<void> {
  let failed: { err: unknown } | undefined;
  for (const runId of runIds) {
    if (stopping()) return;
    if (t.recovering.has(runId)) continue;
    t.recovering.add(runId);
    try {
      await recordLeftBehind(t, runId);
      const current = t.records.get(runId);
      if (current?.state === "ended")
        await announceRecord(t, current).catch((err: unknown) => {
          failed ??= { err };
          t.deps.logger.warn({ runId, err }, "sub-agent announce failed");
        });
    } finally {
      t.recovering.delete(runId);
    }
  }
  if (failed) throw failed.err;
}

/**
 * Runs the recovery of `runIds` in the background until it succeeds: a failed attempt (the database
 * away, a transient error) is logged and tried again after a backoff. `stop` (the gateway stops)
 * ends a backoff at once and starts no further attempt; `done` settles then, or on success.
 */
export function retryRecovery(t: SubagentTable, runIds: string[], timers: GateTimers) {
  let stopped = false;
  let timer: unknown;
  let wake: (() => void) | undefined;
  const backoff = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = timers.setTimeout(resolve, ms);
    });
  const run = async (): Promise<void> => {
    for (let attempt = 1; !stopped; attempt++) {
      try {
        return await recoverSubagents(t, runIds, () => stopped);
      } catch (err) {
        if (stopped) {
          t.deps.logger.warn({ err, attempt }, "sub-agent recovery failed; the next start retries it");
          return;
        }
        const retryInMs = retryDelay(attempt, BACKGROUND_RETRY);
        t.deps.logger.warn({ err, attempt, retryInMs }, "sub-agent recovery failed; retrying");
        await backoff(retryInMs);
      }
    }
  };
  return {
    done: run(),
    stop(): void {
      stopped = true;
      if (timer !== undefined) timers.clearTimeout(timer);
      wake?.();
    },
  };
}

/** Archives announced sub-agent sessions whose time has come; never a running one. Returns how many. */
export async function sweepSubagents(t: SubagentTable): Promise<number> {
  const due = [...t.records.values()].filter(
    (r) => r.state === "announced" && r.archiveAt !== undefined && r.archiveAt <= t.deps.now(),
  );
  for (const record of due) await archiveRecord(t, record);
  return due.length;
}

/** Sweeps every minute (a failed sweep is retried then); the timer does not keep the process alive. */
export function startSweeper(t: SubagentTable): NodeJS.Timeout {
  return setInterval(
    () =>
      void sweepSubagents(t).catch((err: unknown) =>
        t.deps.logger.warn({ err }, "sub-agent archive sweep failed; retried in a minute"),
      ),
    60_000,
  ).unref();
}
