import path from "node:path";
import type { CronJob } from "../cron/cron-job.js";
import { createMemoryLogger } from "../logger.js";
import { askGateway } from "./ask-gateway.js";
import { type CliIo, cliPaths, err, loadCliConfig } from "./cli-io.js";
import { withCliState } from "./cli-state.js";
import { connectCli } from "./connect-cli.js";
import { findGateway } from "./gateway-target.js";

/**
 * The jobs `cron list` shows: the running gateway's; when none runs (no `--url` given), the jobs
 * table read-only from the state, local files or PostgreSQL (a note on stderr says so). A `--url`
 * that does not answer stays an error: the owner asked for that gateway.
 */
export async function listCronJobs(
  io: CliIo,
  configFlag: string | undefined,
  flags: { url?: string; token?: string },
): Promise<CronJob[]> {
  if (flags.url) {
    const client = await connectCli(io, configFlag, flags);
    try {
      return (await client.call<{ jobs: CronJob[] }>("cron.list", {})).jobs;
    } finally {
      await client.close();
    }
  }
  const { config } = await loadCliConfig(io, configFlag);
  const live = await askGateway<{ jobs: CronJob[] }>(await findGateway(io, config, configFlag, flags), "cron.list");
  if (live.value) return live.value.jobs;
  err(io, `${live.problem}; the jobs below are read from the state`);
  const paths = cliPaths(io, configFlag);
  // zod (the job schema) loads with this command only (src/cli/main.ts)
  const { openCronJobStore } = await import("../cron/cron-job-store.js");
  return withCliState(io, config, paths, async ({ state }) => {
    const file = path.join(paths.home, "cron", "jobs.json");
    const store = await openCronJobStore({ state, file, logger: createMemoryLogger() });
    return store.list();
  });
}
