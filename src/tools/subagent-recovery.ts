import { type SubagentTable, announceRecord, archiveRecord, saveRecord } from "./subagent-lifecycle.js";

/**
 * At start, for the runs `runIds` (those stored when the table opened): runs that a restart
 * orphaned are announced as errors; ended runs whose announce was not handed over are announced now.
 * Once `stopping()` says so it starts no further run's announce (a turn): the next start does them.
 */
export async function recoverSubagents(t: SubagentTable, runIds: string[], stopping: () => boolean): Promise<void> {
  for (const runId of runIds) {
    if (stopping()) return;
    const record = t.records.get(runId);
    if (record?.state === "running") {
      await saveRecord(t, {
        ...record,
        state: "ended",
        outcome: "error",
        endedAt: t.deps.now(),
        error: "the gateway restarted while this sub-agent was running",
      });
    }
    const current = t.records.get(runId);
    if (current?.state === "ended")
      await announceRecord(t, current).catch((err: unknown) =>
        t.deps.logger.warn({ runId, err }, "sub-agent announce failed"),
      );
  }
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
