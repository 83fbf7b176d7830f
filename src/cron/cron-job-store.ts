import type { Logger } from "../logger.js";
import type { StatePort, StateTable } from "../state/state-port.js";
import { type CronJob, CronJobSchema } from "./cron-job.js";
import { checkWith } from "../state/schema-check.js";

/** Dependencies of {@link openCronJobStore}. */
export interface CronJobStoreDeps {
  /** where the jobs are kept (the gateway's one port) */
  state: StatePort;
  /** `$SWITCHBOARD_HOME/cron/jobs.json`: the local backend's snapshot of the table */
  file: string;
  logger: Logger;
}

/**
 * Earlier versions wrote `{ version: 1, jobs: [...] }`: rewritten as rows by job id when the table
 * is opened. A job without a usable id is kept under `invalid-<n>` (its check fails, so it is kept
 * untouched and not scheduled), so nothing is lost.
 */
export async function migrateJobsFile(data: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
  if (!Array.isArray(data.jobs) || typeof data.version !== "number") return undefined;
  const rows: Record<string, unknown> = {};
  data.jobs.forEach((job: unknown, n) => {
    const id = (job as { id?: unknown } | null)?.id;
    rows[typeof id === "string" && id !== "" && !(id in rows) ? id : `invalid-${n}`] = job;
  });
  return rows;
}

/**
 * The cron jobs: a table of the state port, by job id (local: `cron/jobs.json` and the journal;
 * PostgreSQL: rows of `state_rows`). A write settles once durable; a job that fails validation is
 * logged and kept untouched, never scheduled, so nothing is silently lost.
 */
export async function openCronJobStore(deps: CronJobStoreDeps) {
  const table: StateTable<CronJob> = await deps.state.table<CronJob>({
    name: "cron-jobs",
    path: deps.file,
    what: "cron jobs",
    keyField: "jobId",
    invalidRows: "keep",
    check: checkWith(CronJobSchema),
    migrate: migrateJobsFile,
  });
  return {
    get: (id: string) => table.get(id),
    /** Every job, oldest first. */
    list: (): CronJob[] => [...table.values()].sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id)),
    /** Replaces (or adds) a job; settles once it is durable. */
    put: (job: CronJob): Promise<void> => table.set(job.id, job),
    /** Removes a job; false when there was none. */
    async remove(id: string): Promise<boolean> {
      if (!table.get(id)) return false;
      await table.delete(id);
      return true;
    },
    /** Leaves the table complete and readable on its own (at stop); later writes still work. */
    close: (): Promise<void> => table.close(),
  };
}

/** The opened jobs table. */
export type CronJobStore = Awaited<ReturnType<typeof openCronJobStore>>;
