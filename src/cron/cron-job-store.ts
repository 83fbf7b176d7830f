import { readFile, rename } from "node:fs/promises";
import type { Logger } from "../logger.js";
import { fileStamp, writeFileAtomic } from "../state/atomic-json-file.js";
import { type CronJob, CronJobSchema } from "./cron-job.js";

/** Dependencies of {@link openCronJobStore}. */
export interface CronJobStoreDeps {
  /** `$SWITCHBOARD_HOME/cron/jobs.json` */
  file: string;
  logger: Logger;
  now: () => number;
}

/** The jobs file's text, or undefined when there is none yet. */
async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    return undefined;
  }
}

/** Reads the jobs file: valid jobs by id, and the invalid records (logged, kept for writing back untouched). */
async function readJobs(deps: CronJobStoreDeps): Promise<{ jobs: Map<string, CronJob>; invalid: unknown[] }> {
  const jobs = new Map<string, CronJob>();
  const invalid: unknown[] = [];
  const text = await readText(deps.file);
  if (text === undefined) return { jobs, invalid };
  let raw: { jobs?: unknown[] } | undefined;
  try {
    raw = JSON.parse(text) as { jobs?: unknown[] };
  } catch (err) {
    const movedTo = `${deps.file}.corrupt-${fileStamp(deps.now())}`;
    await rename(deps.file, movedTo);
    deps.logger.error({ file: deps.file, movedTo, err }, "cron jobs file is corrupt; moved aside, starting empty");
  }
  for (const item of Array.isArray(raw?.jobs) ? raw.jobs : []) {
    const parsed = CronJobSchema.safeParse(item);
    if (parsed.success) jobs.set(parsed.data.id, parsed.data);
    else {
      invalid.push(item);
      deps.logger.error(
        { file: deps.file, job: (item as { id?: unknown })?.id, err: parsed.error },
        "cron job is invalid; kept in the file, not scheduled",
      );
    }
  }
  return { jobs, invalid };
}

/**
 * The jobs file: read once, rewritten atomically after every change (a crash leaves the old or
 * the new file, never half of one). A file that is not JSON is moved aside and reported; a job
 * that fails validation is logged and written back untouched, so nothing is silently lost.
 */
export async function openCronJobStore(deps: CronJobStoreDeps) {
  const read = await readJobs(deps);
  const { jobs } = read;
  let { invalid } = read;
  let writing = Promise.resolve();

  return {
    get: (id: string) => jobs.get(id),
    /** Every job, oldest first. */
    list: (): CronJob[] => [...jobs.values()].sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id)),
    /** Replaces (or adds) a job and writes the file. */
    async put(job: CronJob): Promise<void> {
      jobs.set(job.id, job);
      await this.save();
    },
    async remove(id: string): Promise<boolean> {
      const had = jobs.delete(id);
      if (had) await this.save();
      return had;
    },
    /** Writes the file; writes are serialized, each one with the state at its turn. */
    save(): Promise<void> {
      const text = () => `${JSON.stringify({ version: 1, jobs: [...this.list(), ...invalid] }, null, 2)}\n`;
      writing = writing.catch(() => undefined).then(() => writeFileAtomic(deps.file, text()));
      return writing;
    },
    /** Forgets the invalid records (tests). */
    dropInvalid(): void {
      invalid = [];
    },
  };
}

/** The opened jobs file. */
export type CronJobStore = Awaited<ReturnType<typeof openCronJobStore>>;
