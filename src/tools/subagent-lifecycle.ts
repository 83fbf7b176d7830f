import { SUBAGENT_OUTCOME_OF } from "../agents/run-end.js";
import { type RunRecord, isFinalStatus } from "../agents/run-registry.js";
import type { StateTable, TableSpec } from "../state/state-port.js";
import { announceEnded } from "./subagent-announce.js";
import { type SubagentRecord, SubagentRecordSchema, type SubagentRegistryDeps } from "./subagent-record.js";
import { checkWith } from "../state/schema-check.js";

/** The registry's dependencies and its open table: what every step of a sub-agent's life works on. */
export interface SubagentTable {
  deps: SubagentRegistryDeps;
  records: StateTable<SubagentRecord>;
  /** runs a recovery is working on now: another recovery (at start, of an adopted partition) leaves them to it */
  recovering: Set<string>;
}

/** What the registry indexes of the rows of partitions adopted and evicted (`TableSpec.onAdopt`, `onEvict`). */
type PartHooks = Pick<TableSpec<SubagentRecord>, "onAdopt" | "onEvict">;

/** Opens the "subagents" table; unreadable rows are kept (and reported) rather than dropped. */
export async function openSubagentTable(deps: SubagentRegistryDeps, hooks: PartHooks = {}): Promise<SubagentTable> {
  const records = await deps.state.table<SubagentRecord>({ ...subagentTableSpec(deps.path), ...hooks });
  return { deps, records, recovering: new Set() };
}

/** The sub-agent registry's table (`path`: its file on local files); a standby reads it too (src/gateway/standby-reads.ts). */
export function subagentTableSpec(path: string): TableSpec<SubagentRecord> {
  return {
    name: "subagents",
    path,
    what: "sub-agent registry",
    keyField: "runId",
    invalidRows: "keep",
    // The run, its end and its announce step happen in the child's session.
    sessionOf: (_runId, record) => record.childSessionKey,
    check: checkWith(SubagentRecordSchema),
  };
}

/** Writes one record through to the table. */
export async function saveRecord(t: SubagentTable, record: SubagentRecord): Promise<void> {
  await t.records.set(record.runId, record);
}

/** Announces an ended run, then marks it announced (and archives it at once when its cleanup is "delete"). */
export async function announceRecord(t: SubagentTable, record: SubagentRecord): Promise<void> {
  if (record.state !== "ended") return;
  await announceEnded(t.deps, record);
  await finishAnnounce(t, record);
}

async function finishAnnounce(t: SubagentTable, record: SubagentRecord): Promise<void> {
  const at = t.deps.now();
  const announced: SubagentRecord = {
    ...record,
    state: "announced",
    announcedAt: at,
    archiveAt: at + t.deps.archiveAfterMinutes * 60_000,
  };
  await saveRecord(t, announced);
  if (record.cleanup === "delete") await archiveRecord(t, announced);
}

/** Deletes the child's session (a failure is logged, not thrown) and marks the record archived. */
export async function archiveRecord(t: SubagentTable, record: SubagentRecord): Promise<void> {
  const { store } = await t.deps.sessions.forAgent(record.childAgentId);
  await store
    .delete(record.childSessionKey)
    .catch((err: unknown) =>
      t.deps.logger.warn({ sessionKey: record.childSessionKey, err }, "sub-agent archive failed"),
    );
  await saveRecord(t, { ...record, state: "archived" });
}

/** The child session's token counts, if it still exists. */
async function childUsage(t: SubagentTable, record: SubagentRecord): Promise<SubagentRecord["usage"]> {
  const child = (await t.deps.sessions.forAgent(record.childAgentId)).store.get(record.childSessionKey);
  return (
    child && {
      inputTokens: child.inputTokens,
      outputTokens: child.outputTokens,
      totalTokens: child.totalTokens,
    }
  );
}

/** Records how a running sub-agent's run ended, then announces it (a failed announce is retried at the next start). */
async function recordEnded(t: SubagentTable, runId: string, run: RunRecord): Promise<void> {
  const record = t.records.get(runId);
  if (record?.state !== "running") return;
  const { queued: _queued, ...ran } = record;
  const outcome = isFinalStatus(run.status) ? SUBAGENT_OUTCOME_OF[run.status] : "error";
  const usage = await childUsage(t, record);
  await saveRecord(t, {
    ...(usage && { usage }),
    ...ran,
    state: "ended",
    outcome,
    endedAt: run.endedAt ?? t.deps.now(),
    ...(run.startedAt && { startedAt: run.startedAt }),
    ...(run.text && { result: run.text }),
    ...(run.error && outcome !== "success" && { error: run.error }),
  });
  await announceRecord(t, t.records.get(runId)!).catch((err: unknown) =>
    t.deps.logger.warn({ runId, err }, "sub-agent announce failed; retried at the next start"),
  );
}

/**
 * Saves a spawned run as running (`queued` until its run starts, see `markStarted`; a record saved
 * again keeps its creation time) and records its end when `done` settles. Returns that end's
 * record and announce: `ended` settles (never rejects) once the announce was handed over or failed.
 */
export async function registerSpawn(
  t: SubagentTable,
  record: Omit<SubagentRecord, "state" | "createdAt">,
  done: Promise<RunRecord>,
): Promise<{ ended: Promise<void> }> {
  const createdAt = t.records.get(record.runId)?.createdAt ?? t.deps.now();
  await saveRecord(t, { ...record, state: "running", createdAt });
  // A failure here (a store write) must not become an unhandled rejection: the next start retries.
  const ended = done
    .then((run) => recordEnded(t, record.runId, run))
    .catch((err: unknown) =>
      t.deps.logger.error({ runId: record.runId, err }, "sub-agent completion failed; recovered at the next start"),
    );
  return { ended };
}

/** The run of a queued record started: from now on a restart finds it interrupted (announced as an error). */
export async function markStarted(t: SubagentTable, runId: string): Promise<void> {
  const record = t.records.get(runId);
  if (record?.state !== "running" || !record.queued) return;
  const { queued: _queued, ...started } = record;
  await saveRecord(t, started);
}
