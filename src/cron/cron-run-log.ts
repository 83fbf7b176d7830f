import { readFile, readdir, rename } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { Logger } from "../logger.js";
import type { StatePort, StateTable } from "../state/state-port.js";
import { CronRunStatusSchema, CronTriggerSchema } from "./cron-job.js";
import { checkWith } from "../state/schema-check.js";

/** One finished run of a job: a row of the state table `cron-runs` (keyed by {@link keyOf}). */
const CronRunRecordSchema = z.looseObject({
  jobId: z.string(),
  runId: z.string(),
  /** ms */
  startedAt: z.number(),
  endedAt: z.number(),
  status: CronRunStatusSchema,
  error: z.string().optional(),
  sessionKey: z.string().optional(),
  sessionId: z.string().optional(),
  /** the reply reached the delivery gate and was delivered or queued for retry */
  delivered: z.boolean(),
  /** the gate's verdict: delivered, queued, denied, failed; or skipped (ANNOUNCE_SKIP, empty), none */
  delivery: z.string().optional(),
  /** why it ran: schedule, catch-up (missed while the gateway was down), manual */
  trigger: CronTriggerSchema.optional(),
});
export type CronRunRecord = z.infer<typeof CronRunRecordSchema>;

/** Why a run started. */
export type CronTrigger = NonNullable<CronRunRecord["trigger"]>;

/** What running a job produced (the executor's answer). */
export type CronRunOutcome = Pick<
  CronRunRecord,
  "status" | "error" | "sessionKey" | "sessionId" | "delivered" | "delivery"
>;

/** The state table holding every job's runs. */
const CRON_RUNS_TABLE = "cron-runs";

/** Dependencies of {@link openCronRunLog}. */
export interface CronRunLogDeps {
  /** the gateway's one state port: the runs are a table of it */
  state: StatePort;
  /** `$SWITCHBOARD_HOME/state/cron-runs.json`: the local backend's snapshot of the table */
  file: string;
  /** `$SWITCHBOARD_HOME/cron/runs`: an earlier version's JSONL logs, imported once (see {@link importJsonlLogs}) */
  legacyDir: string;
  /** a job's runs over this many bytes (of JSON) keep their newest half */
  maxBytes: number;
  logger: Logger;
}

/** A run's row key: its job first (a job's runs share the prefix), then when and which run. */
const keyOf = (record: CronRunRecord) => `${jobPrefix(record.jobId)}${record.startedAt}-${record.runId}`;
/** The prefix of a job's keys ("/" in a job id escaped, so one job's prefix is never another's). */
const jobPrefix = (jobId: string) => `${encodeURIComponent(jobId)}/`;

/** Every record of an earlier version's `<jobId>.jsonl` logs, oldest first; unreadable (torn) lines skipped. */
async function readJsonlLogs(dir: string, logger: Logger): Promise<CronRunRecord[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const records: CronRunRecord[] = [];
  for (const name of names.filter((n) => n.endsWith(".jsonl")).sort()) {
    for (const line of (await readFile(path.join(dir, name), "utf8")).split("\n")) {
      if (!line.trim()) continue;
      try {
        const parsed = CronRunRecordSchema.safeParse(JSON.parse(line));
        if (parsed.success) records.push(parsed.data);
      } catch (err) {
        logger.warn({ file: name, err }, "cron run log line skipped: not JSON");
      }
    }
  }
  return records;
}

/**
 * Earlier versions kept `cron/runs/<jobId>.jsonl`: when the table is still empty, their records are
 * written as rows in one commit and the folder is renamed `cron/runs.imported` (kept, never deleted).
 */
async function importJsonlLogs(deps: CronRunLogDeps, table: StateTable<CronRunRecord>): Promise<void> {
  if (deps.state.readOnly || table.size > 0) return;
  const records = await readJsonlLogs(deps.legacyDir, deps.logger);
  if (records.length === 0) return;
  const writes: Promise<void>[] = [];
  await deps.state.commit(() => {
    for (const record of records) writes.push(table.set(keyOf(record), record));
  });
  await Promise.all(writes);
  await rename(deps.legacyDir, `${deps.legacyDir}.imported`);
  deps.logger.info({ runs: records.length, movedTo: `${deps.legacyDir}.imported` }, "cron run logs imported");
}

/** The runs of `jobId`, oldest first, with their keys. */
function runsOf(table: StateTable<CronRunRecord>, jobId: string): Array<[string, CronRunRecord]> {
  const prefix = jobPrefix(jobId);
  return [...table.entries()].filter(([key]) => key.startsWith(prefix));
}

/** The keys of a job's oldest runs to drop so that its newest half (at most `maxBytes / 2`) stays. */
function overflow(runs: Array<[string, CronRunRecord]>, maxBytes: number): string[] {
  const sizes = runs.map(([, run]) => Buffer.byteLength(JSON.stringify(run)) + 1);
  if (sizes.reduce((a, b) => a + b, 0) <= maxBytes) return [];
  let keep = runs.length - Math.floor(runs.length / 2);
  const sum = (n: number) => sizes.slice(sizes.length - n).reduce((a, b) => a + b, 0);
  while (keep > 1 && sum(keep) > maxBytes / 2) keep = Math.floor(keep / 2);
  return runs.slice(0, runs.length - keep).map(([key]) => key);
}

/**
 * Per-job run logs, appended after each run and capped in size: a table of the state port (local:
 * `state/cron-runs.json` and the journal; PostgreSQL: rows of `state_rows`), so they live where the
 * rest of the state does.
 */
export async function openCronRunLog(deps: CronRunLogDeps) {
  const table = await deps.state.table<CronRunRecord>({
    name: CRON_RUNS_TABLE,
    path: deps.file,
    what: "cron run log",
    invalidRows: "keep",
    check: checkWith(CronRunRecordSchema),
  });
  await importJsonlLogs(deps, table);
  return {
    /** Appends one record; a job whose runs grew past `maxBytes` drops its oldest half, in the same commit. */
    async append(record: CronRunRecord): Promise<void> {
      const writes: Promise<void>[] = [];
      await deps.state.commit(() => {
        writes.push(table.set(keyOf(record), record));
        for (const key of overflow(runsOf(table, record.jobId), deps.maxBytes)) writes.push(table.delete(key));
      });
      await Promise.all(writes);
    },
    /** The newest `limit` records of a job, newest first. */
    async read(jobId: string, limit = 50): Promise<CronRunRecord[]> {
      return runsOf(table, jobId)
        .slice(-limit)
        .reverse()
        .map(([, run]) => run);
    },
    /** Leaves the table complete and readable on its own (at stop). */
    close: (): Promise<void> => table.close(),
  };
}

/** The run logs. */
export type CronRunLog = Awaited<ReturnType<typeof openCronRunLog>>;
