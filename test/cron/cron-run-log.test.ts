import { mkdtemp, readFile, stat, appendFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createCronRunLog } from "../../src/cron/cron-run-log.js";
import { createMemoryLogger } from "../../src/logger.js";

const record = (i: number) => ({
  jobId: "brief",
  runId: `run-${i}`,
  startedAt: i,
  endedAt: i + 1,
  status: "ok" as const,
  delivered: true,
  delivery: "delivered",
});

describe("createCronRunLog", () => {
  it("keeps a job's log under its cap by dropping the oldest runs, newest first when read", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "sb-runs-"));
    const log = createCronRunLog({ dir, maxBytes: 10_000, logger: createMemoryLogger() });
    for (let i = 0; i < 300; i++) await log.append(record(i));
    expect((await stat(log.fileOf("brief"))).size).toBeLessThanOrEqual(10_000);
    const runs = await log.read("brief", 500);
    expect(runs[0]!.runId).toBe("run-299");
    expect(runs.length).toBeGreaterThan(20);
    expect(runs.map((r) => r.startedAt)).toEqual([...runs.map((r) => r.startedAt)].sort((a, b) => b - a));
  });

  it("skips a line a crash tore and reads the rest", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "sb-runs-"));
    const log = createCronRunLog({ dir, maxBytes: 10_000, logger: createMemoryLogger() });
    await log.append(record(1));
    await appendFile(log.fileOf("brief"), '{"jobId":"brief","runId":"ru');
    await log.append(record(2));
    expect((await log.read("brief")).map((r) => r.runId)).toEqual(["run-2", "run-1"]);
    expect(await readFile(log.fileOf("brief"), "utf8")).toContain("run-2");
  });

  it("reads an empty list for a job that never ran", async () => {
    const log = createCronRunLog({
      dir: await mkdtemp(path.join(os.tmpdir(), "sb-runs-")),
      maxBytes: 10_000,
      logger: createMemoryLogger(),
    });
    expect(await log.read("nope")).toEqual([]);
  });
});
