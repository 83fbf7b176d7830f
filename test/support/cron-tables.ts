// The cron scheduler's two tables on a local state in a temp home, as the gateway opens them, for
// scheduler tests on a manual clock.
import path from "node:path";
import { openCronJobStore } from "../../src/cron/cron-job-store.js";
import { openCronRunLog } from "../../src/cron/cron-run-log.js";
import { createMemoryLogger } from "../../src/logger.js";
import { openLocalState } from "../../src/state/local-state.js";

/** The jobs and runs tables of `home` (its local state read at `now`), and the logger they write to. */
export async function openCronTables(home: string, now: () => number) {
  const logger = createMemoryLogger();
  const state = openLocalState({ dir: path.join(home, "state"), logger, now });
  const store = await openCronJobStore({ state, file: path.join(home, "cron", "jobs.json"), logger });
  const [file, legacyDir] = [path.join(home, "state", "cron-runs.json"), path.join(home, "cron", "runs")];
  const runLog = await openCronRunLog({ state, file, legacyDir, maxBytes: 1_000_000, logger });
  return { state, store, runLog, logger };
}
