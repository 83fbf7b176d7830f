// The sub-agent runs of partitions adopted while the gateway runs (docs/scale-out.md "Partitions
// adopted and evicted one by one"): the records the table's hooks index, and their recovery, the
// same as the recovery of the runs a restart left behind.
import { nodeTimers } from "../delivery/gate-timer.js";
import type { TableSpec } from "../state/state-port.js";
import type { SubagentTable } from "./subagent-lifecycle.js";
import type { SubagentRecord } from "./subagent-record.js";
import { retryRecovery } from "./subagent-recovery.js";

/** A record a recovery may have work on: a run not ended, or ended and not announced. */
const unfinished = (record: SubagentRecord) => record.state === "running" || record.state === "ended";

/**
 * The runs of adopted partitions not recovered yet, kept by the table's hooks: an adopted record
 * that is running or unannounced joins, an evicted one leaves (nothing here touches it after).
 */
export function adoptedRuns() {
  const pending = new Set<string>();
  const hooks: Pick<TableSpec<SubagentRecord>, "onAdopt" | "onEvict"> = {
    onAdopt(rows) {
      for (const [runId, record] of rows) if (unfinished(record)) pending.add(runId);
    },
    onEvict(rows) {
      for (const [runId] of rows) pending.delete(runId);
    },
  };
  return {
    hooks,
    /** Takes out the pending runs `wanted` says yes to. */
    take(wanted: (runId: string) => boolean): string[] {
      const taken = [...pending].filter(wanted);
      for (const runId of taken) pending.delete(runId);
      return taken;
    },
  };
}

/** The adopted runs' index. */
type AdoptedRuns = ReturnType<typeof adoptedRuns>;

/** The runs this process spawned whose end it has not recorded yet: never taken for left behind. */
export function spawnedHere() {
  // By run id, how many registrations are waiting for their end (a replayed spawn registers again).
  const running = new Map<string, number>();
  return {
    /** `runId` runs here until `ended` settles. */
    track(runId: string, ended: Promise<unknown>): void {
      running.set(runId, (running.get(runId) ?? 0) + 1);
      void ended.finally(() => {
        const left = running.get(runId)! - 1;
        if (left > 0) running.set(runId, left);
        else running.delete(runId);
      });
    },
    has: (runId: string): boolean => running.has(runId),
  };
}

/**
 * The recovery of adopted runs: each `recoverAdopted(only)` recovers, in the background and retried
 * like the one at start, the pending adopted runs whose child session `only` matches, except the
 * runs spawned here. `stop` starts none after and ends those running; `recovered` waits for them.
 */
export function adoptedRecovery(t: SubagentTable, adopted: AdoptedRuns, ownRuns: ReturnType<typeof spawnedHere>) {
  const running = new Set<ReturnType<typeof retryRecovery>>();
  let stopping = false;
  return {
    recoverAdopted(only: (sessionKey: string) => boolean): void {
      if (stopping) return;
      const runIds = adopted.take((runId) => {
        const record = t.records.get(runId);
        return record !== undefined && only(record.childSessionKey) && !ownRuns.has(runId);
      });
      if (runIds.length === 0) return;
      const recovery = retryRecovery(t, runIds, t.deps.timers ?? nodeTimers);
      running.add(recovery);
      void recovery.done.finally(() => running.delete(recovery));
    },
    stop(): void {
      stopping = true;
      for (const recovery of running) recovery.stop();
    },
    recovered: async (): Promise<void> => {
      await Promise.all([...running].map((recovery) => recovery.done));
    },
  };
}
