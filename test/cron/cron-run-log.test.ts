import { mkdir, mkdtemp, readdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openCronRunLog } from "../../src/cron/cron-run-log.js";
import { createMemoryLogger } from "../../src/logger.js";
import { openLocalState } from "../../src/state/local-state.js";
import { cronRun } from "../contracts/channel-state-contract.js";

// The run log's behaviour on every backend is in test/contracts/channel-state-contract.ts; this is
// the local home of an earlier version, whose logs were `cron/runs/<jobId>.jsonl` files.
const record = (i: number) => cronRun(i);

async function openLog(home: string, readOnly = false) {
  const logger = createMemoryLogger();
  const state = openLocalState({ dir: path.join(home, "state"), logger, readOnly });
  const log = await openCronRunLog({
    state,
    file: path.join(home, "state", "cron-runs.json"),
    legacyDir: path.join(home, "cron", "runs"),
    maxBytes: 10_000,
    logger,
  });
  return { log, state, logger };
}

describe("cron run logs of an earlier version", () => {
  it("imports the JSONL logs once (a line a crash tore skipped) and keeps the folder as cron/runs.imported", async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "sb-runs-"));
    await mkdir(path.join(home, "cron", "runs"), { recursive: true });
    const lines = [record(1), record(2)].map((r) => JSON.stringify(r)).join("\n");
    await writeFile(path.join(home, "cron", "runs", "brief.jsonl"), `${lines}\n{"jobId":"brief","runId":"ru`);
    const first = await openLog(home);
    expect((await first.log.read("brief")).map((r) => r.runId)).toEqual(["run-2", "run-1"]);
    expect(await readdir(path.join(home, "cron"))).toEqual(["runs.imported"]);
    await first.log.append(record(3));
    await first.state.close();
    const again = await openLog(home);
    expect((await again.log.read("brief")).map((r) => r.runId)).toEqual(["run-3", "run-2", "run-1"]);
    await again.state.close();
  });

  it("reads an empty list for a job that never ran", async () => {
    const { log, state } = await openLog(await mkdtemp(path.join(os.tmpdir(), "sb-runs-")));
    expect(await log.read("nope")).toEqual([]);
    await state.close();
  });
});
