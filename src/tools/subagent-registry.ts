import { SUBAGENT_OUTCOME_OF } from "../agents/run-end.js";
import { type RunRecord, isFinalStatus } from "../agents/run-registry.js";
import { announceEnded } from "./subagent-announce.js";
import { type SubagentRecord, SubagentRecordSchema, type SubagentRegistryDeps } from "./subagent-record.js";

export type { SubagentRecord } from "./subagent-record.js";

/**
 * The sub-agent runs: spawn records, completion, the announce step (Status from the runtime,
 * Result/Notes from the child), exactly-once delivery through the outbox, cascade stop, archive.
 */
export async function createSubagentRegistry(deps: SubagentRegistryDeps) {
  const { logger, now } = deps;
  const records = await deps.state.table<SubagentRecord>({
    name: "subagents",
    path: deps.path,
    what: "sub-agent registry",
    keyField: "runId",
    invalidRows: "keep",
    check(_runId, row) {
      const parsed = SubagentRecordSchema.safeParse(row);
      return parsed.success ? { value: parsed.data } : { error: parsed.error.message };
    },
  });

  async function save(record: SubagentRecord): Promise<void> {
    await records.set(record.runId, record);
  }

  async function announce(record: SubagentRecord): Promise<void> {
    if (record.state !== "ended") return;
    await announceEnded(deps, record);
    await finishAnnounce(record);
  }

  async function finishAnnounce(record: SubagentRecord): Promise<void> {
    const at = now();
    const announced: SubagentRecord = {
      ...record,
      state: "announced",
      announcedAt: at,
      archiveAt: at + deps.archiveAfterMinutes * 60_000,
    };
    await save(announced);
    if (record.cleanup === "delete") await archive(announced);
  }

  async function archive(record: SubagentRecord): Promise<void> {
    const { store } = await deps.sessions.forAgent(record.childAgentId);
    await store
      .delete(record.childSessionKey)
      .catch((err: unknown) => logger.warn({ sessionKey: record.childSessionKey, err }, "sub-agent archive failed"));
    await save({ ...record, state: "archived" });
  }

  async function ended(runId: string, run: RunRecord): Promise<void> {
    const record = records.get(runId);
    if (record?.state !== "running") return;
    const outcome = isFinalStatus(run.status) ? SUBAGENT_OUTCOME_OF[run.status] : "error";
    const child = (await deps.sessions.forAgent(record.childAgentId)).store.get(record.childSessionKey);
    const usage = child && {
      inputTokens: child.inputTokens,
      outputTokens: child.outputTokens,
      totalTokens: child.totalTokens,
    };
    await save({
      ...(usage && { usage }),
      ...record,
      state: "ended",
      outcome,
      endedAt: run.endedAt ?? now(),
      ...(run.startedAt && { startedAt: run.startedAt }),
      ...(run.text && { result: run.text }),
      ...(run.error && outcome !== "success" && { error: run.error }),
    });
    await announce(records.get(runId)!).catch((err: unknown) =>
      logger.warn({ runId, err }, "sub-agent announce failed; retried at the next start"),
    );
  }

  function watch(runId: string, done: Promise<RunRecord>): void {
    // A failure here (a store write) must not become an unhandled rejection: the next start retries.
    done
      .then((run) => ended(runId, run))
      .catch((err: unknown) =>
        logger.error({ runId, err }, "sub-agent completion failed; recovered at the next start"),
      );
  }

  let sweeper: NodeJS.Timeout | undefined;

  return {
    /** Registers a spawned run and announces it when its `done` settles. */
    async register(record: Omit<SubagentRecord, "state" | "createdAt">, done: Promise<RunRecord>): Promise<void> {
      await save({ ...record, state: "running", createdAt: now() });
      watch(record.runId, done);
    },

    /**
     * At start: runs that a restart orphaned are announced as errors; ended runs whose announce was
     * not handed over are announced now. Then the archive sweeper starts.
     */
    async recover(): Promise<void> {
      for (const record of [...records.values()]) {
        if (record.state === "running") {
          await save({
            ...record,
            state: "ended",
            outcome: "error",
            endedAt: now(),
            error: "the gateway restarted while this sub-agent was running",
          });
        }
        const current = records.get(record.runId)!;
        if (current.state === "ended")
          await announce(current).catch((err: unknown) =>
            logger.warn({ runId: record.runId, err }, "sub-agent announce failed"),
          );
      }
      sweeper = setInterval(
        () =>
          void this.sweep().catch((err: unknown) =>
            logger.warn({ err }, "sub-agent archive sweep failed; retried in a minute"),
          ),
        60_000,
      ).unref();
    },

    /** Archives announced sub-agent sessions whose time has come; never a running one. */
    async sweep(): Promise<number> {
      const due = [...records.values()].filter(
        (r) => r.state === "announced" && r.archiveAt !== undefined && r.archiveAt <= now(),
      );
      for (const record of due) await archive(record);
      return due.length;
    },

    /** The sub-agents `requesterKey` spawned, newest first. */
    list(requesterKey: string): SubagentRecord[] {
      return [...records.values()]
        .filter((r) => r.requesterKey === requesterKey)
        .sort((a, b) => b.createdAt - a.createdAt);
    },

    /** Stops the running sub-agents of `requesterKey` (or one of them) and theirs; returns how many stopped. */
    async stop(requesterKey: string, runId?: string): Promise<number> {
      let stopped = 0;
      for (const record of [...records.values()]) {
        if (record.requesterKey !== requesterKey || record.state !== "running" || (runId && record.runId !== runId))
          continue;
        stopped += await this.stop(record.childSessionKey);
        deps.runtime().abortSession(record.childSessionKey);
        stopped += 1;
      }
      return stopped;
    },

    get: (runId: string) => records.get(runId),

    /** The record of the sub-agent running in session `childKey`, if any. */
    byChild: (childKey: string) => [...records.values()].find((r) => r.childSessionKey === childKey),

    async close(): Promise<void> {
      if (sweeper) clearInterval(sweeper);
      await records.close();
    },
  };
}

/** The sub-agent registry. */
export type SubagentRegistry = Awaited<ReturnType<typeof createSubagentRegistry>>;
