// Cron jobs as an earlier version kept them, one whole file (`<home>/cron/jobs.json`): what a
// hand-edited file and a home to migrate hold.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

/** A stored job running `message` on agent main in an isolated session, delivering nothing; `fields` replace any part. */
export function storedCronJob(fields: { id: string; schedule: unknown } & Record<string, unknown>) {
  return {
    name: fields.id,
    agentId: "main",
    message: "go",
    session: "isolated",
    delivery: { mode: "none" },
    enabled: true,
    keepAfterRun: false,
    createdAt: 1,
    updatedAt: 1,
    state: { consecutiveFailures: 0 },
    ...fields,
  };
}

/** Writes `jobs` to `<home>/cron/jobs.json` in the whole-file format. */
export async function writeCronJobsFile(home: string, jobs: unknown[]): Promise<void> {
  await mkdir(path.join(home, "cron"), { recursive: true });
  await writeFile(path.join(home, "cron", "jobs.json"), JSON.stringify({ version: 1, jobs }));
}
