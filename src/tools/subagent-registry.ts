import type { RunRecord } from "../agents/run-registry.js";
import { type SubagentTable, markStarted, openSubagentTable, registerSpawn, saveRecord } from "./subagent-lifecycle.js";
import type { SubagentRecord, SubagentRegistryDeps } from "./subagent-record.js";
import { nodeTimers } from "../delivery/gate-timer.js";
import { retryRecovery, startSweeper, sweepSubagents } from "./subagent-recovery.js";
import { adoptedRecovery, adoptedRuns, spawnedHere } from "./subagent-adopted.js";

export type { SubagentRecord } from "./subagent-record.js";

/** The sub-agents `requesterKey` spawned among `records`, newest first (the registry's list, and a read of committed rows). */
export function subagentsOf(records: Iterable<SubagentRecord>, requesterKey: string): SubagentRecord[] {
  return [...records].filter((r) => r.requesterKey === requesterKey).sort((a, b) => b.createdAt - a.createdAt);
}

/**
 * Stops the running sub-agents of `requesterKey` (or one of them) and theirs; returns how many
 * stopped. The stop is written on each record, then its abort is stored in the child's inbox (whose
 * owner aborts the run): a restart that replays the spawn (or finds the run cut off) records it
 * stopped rather than running or announcing it, and the replayed abort finds it no longer running.
 */
async function stopSubagents(t: SubagentTable, requesterKey: string, runId?: string): Promise<number> {
  let stopped = 0;
  for (const record of [...t.records.values()]) {
    if (record.requesterKey !== requesterKey || record.state !== "running" || (runId && record.runId !== runId))
      continue;
    stopped += await stopSubagents(t, record.childSessionKey);
    // Read again after the awaits: a run that ended meanwhile keeps its end (not the snapshot's running copy).
    const current = t.records.get(record.runId);
    if (current?.state !== "running") continue;
    const asked = { ...current, stopAskedAt: t.deps.now() };
    await saveRecord(t, asked);
    await t.deps.stopChild(asked);
    stopped += 1;
  }
  return stopped;
}

/** The recovery of the runs a restart left behind (the ones stored at open: a run spawned later is this process's own), then the archive sweeper. */
function restartRecovery(t: SubagentTable) {
  const leftBehind = [...t.records.keys()];
  let sweeper: NodeJS.Timeout | undefined;
  let recovery: ReturnType<typeof retryRecovery> | undefined;
  let recovering: Promise<void> | undefined;
  let stopping = false;
  const stop = () => {
    stopping = true;
    recovery?.stop();
  };
  return {
    /**
     * At start, in the background (its announce turns hold up nothing): recovers the orphaned and
     * unannounced runs stored at open (see `recoverSubagents`), retried with backoff until it
     * succeeds or a stop begins (see `retryRecovery`), then starts the archive sweeper.
     */
    recover(): void {
      if (recovering || stopping) return;
      recovery = retryRecovery(t, leftBehind, t.deps.timers ?? nodeTimers);
      recovering = recovery.done.then(() => {
        if (!stopping) sweeper = startSweeper(t);
      });
    },
    /** A stop began: the recovery starts no further announce or retry (what is left is the next start's). */
    stop,
    /** Settles once the recovery begun by `recover` is done (tests wait on it). */
    recovered: (): Promise<void> => recovering ?? Promise.resolve(),
    /** Stops the recovery and the sweeper. */
    close(): void {
      stop();
      if (sweeper) clearInterval(sweeper);
    },
  };
}

/** The spawn turns whose child entry and record this process is writing: `sessions_spawn` answers once they are. */
function spawnPreparations() {
  const preparing = new Map<string, Promise<unknown>>();
  return {
    /**
     * A spawn turn run here writes the child's entry and record until `prepared` settles; a failed
     * write is kept until `prepared` reads it (the tool may ask only after it failed).
     */
    preparing(runId: string, prepared: Promise<unknown>): void {
      preparing.set(runId, prepared);
      prepared.then(
        () => preparing.delete(runId),
        () => undefined,
      );
    },
    /** Settles once a spawn turn run here wrote its child's entry and record (at once when none is being written); rejects when that write failed. */
    prepared: async (runId: string): Promise<void> => {
      await preparing.get(runId)?.finally(() => preparing.delete(runId));
    },
  };
}

/**
 * The sub-agent runs: spawn records, completion, the announce step (Status from the runtime,
 * Result/Notes from the child), exactly-once delivery through the outbox, cascade stop, archive.
 * The steps live in subagent-lifecycle.ts (spawn, end, announce, archive), subagent-recovery.ts
 * (restart recovery, archive sweep) and subagent-adopted.ts (the runs of adopted partitions); this
 * only wires them to one table.
 */
export async function createSubagentRegistry(deps: SubagentRegistryDeps) {
  const adopted = adoptedRuns();
  const t = await openSubagentTable(deps, adopted.hooks);
  const restart = restartRecovery(t);
  const ownRuns = spawnedHere();
  const adoption = adoptedRecovery(t, adopted, ownRuns);
  const recovery = {
    stop(): void {
      restart.stop();
      adoption.stop();
    },
    recovered: async (): Promise<void> => {
      await Promise.all([restart.recovered(), adoption.recovered()]);
    },
  };
  return {
    /** Registers a spawned run and announces it when its `done` settles (`ended`: once announced). */
    async register(
      record: Omit<SubagentRecord, "state" | "createdAt">,
      done: Promise<RunRecord>,
    ): Promise<{ ended: Promise<void> }> {
      const registered = await registerSpawn(t, record, done);
      ownRuns.track(record.runId, registered.ended);
      return registered;
    },
    /** The run of a queued record started (a restart now finds it interrupted). */
    started: (runId: string): Promise<void> => markStarted(t, runId),
    ...spawnPreparations(),
    /** At start, in the background: recovers the runs a restart left behind, then starts the archive sweeper. */
    recover: restart.recover,
    /**
     * After `state.parted.adopt`, in the background: recovers the adopted runs whose child session
     * `only` matches as `recover` recovers those a restart left behind (never a run spawned here).
     */
    recoverAdopted: adoption.recoverAdopted,
    /** A stop began: the recoveries start no further announce or retry (what is left is the next start's). */
    stopRecovery: recovery.stop,
    /** Settles once the recoveries begun by `recover` and `recoverAdopted` are done (tests wait on them). */
    recovered: recovery.recovered,
    /** Archives announced sub-agent sessions whose time has come; never a running one. */
    sweep: (): Promise<number> => sweepSubagents(t),
    /** The sub-agents `requesterKey` spawned, newest first. */
    list: (requesterKey: string): SubagentRecord[] => subagentsOf(t.records.values(), requesterKey),
    /** Stops the running sub-agents of `requesterKey` (or one of them) and theirs; returns how many stopped. */
    stop: (requesterKey: string, runId?: string): Promise<number> => stopSubagents(t, requesterKey, runId),
    get: (runId: string) => t.records.get(runId),
    /** The record of the sub-agent running in session `childKey`, if any. */
    byChild: (childKey: string) => [...t.records.values()].find((r) => r.childSessionKey === childKey),
    async close(): Promise<void> {
      // Not waiting for the recovery: an announce turn still running after the stop's drain budget is
      // cut off with the process, as any turn is, and its run is announced at the next start.
      restart.close();
      adoption.stop();
      await t.records.close();
    },
  };
}

/** The sub-agent registry. */
export type SubagentRegistry = Awaited<ReturnType<typeof createSubagentRegistry>>;
