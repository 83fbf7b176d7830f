import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseDuration } from "../../src/cli/cron-command.js";
import { connectGateway } from "../../src/cli/gateway-client.js";
import { CronJobSchema } from "../../src/cron/cron-job.js";
import { CRON_NAME_RULE } from "../../src/cron/cron-name.js";
import { openCronJobStore } from "../../src/cron/cron-job-store.js";
import { createMemoryLogger } from "../../src/logger.js";
import { openLocalState } from "../../src/state/local-state.js";
import { cli, tempHome } from "../support/fake-cli-io.js";
import { useTestGateways } from "../support/test-gateway.js";

const startGateway = useTestGateways();

/** Writes a job into the home's state as a gateway stores it (every 60 s, message "m"). */
async function storeJob(home: string, { id, name }: { id: string; name: string }) {
  const logger = createMemoryLogger();
  const state = openLocalState({ dir: path.join(home, "state"), logger });
  const jobs = await openCronJobStore({ state, file: path.join(home, "cron", "jobs.json"), logger });
  const now = Date.now();
  const job = { name, schedule: { kind: "every", everyMs: 60_000 }, message: "m", agentId: "main" };
  await jobs.put(CronJobSchema.parse({ ...job, id, createdAt: now, updatedAt: now }));
  await state.close();
}

describe("parseDuration", () => {
  it.each([
    ["30s", 30_000],
    ["10m", 600_000],
    ["2h", 7_200_000],
    ["1d", 86_400_000],
    ["250ms", 250],
  ])("reads %s", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["", "10", "5x", "1.5h", "-3m"])("refuses %j", (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe("switchboard cron add", () => {
  it.each([
    [["--cron", "0 8 * * *", "--message", "m"], "cron add needs --name, --message and one of --cron, --every, --at"],
    [["--name", "x", "--every", "5x", "--message", "m"], '--every: "5x" is not a duration such as 30s, 10m, 2h, 1d'],
    [["--name", "x", "--at", "tomorrow-ish", "--message", "m"], '--at: "tomorrow-ish" is neither an ISO time'],
    [["--name", "x", "--cron", "0 8 * * *", "--every", "1h", "--message", "m"], "give one of --cron, --every, --at"],
    [["--name", "x", "--every", "1h", "--tz", "Europe/Berlin", "--message", "m"], "--tz needs --cron"],
    [
      ["--name", "x", "--every", "1h", "--timeout", "soon", "--message", "m"],
      '--timeout: "soon" is not a number of seconds',
    ],
    [["--name", "x", "--every", "0s", "--message", "m"], '--every: "0s" is too short; the shortest interval is 1s'],
    [["--name", "two\nlines", "--every", "1h", "--message", "m"], "--name must be one line of text"],
    [["--name", "invoice\u202Efdp.exe", "--every", "1h", "--message", "m"], "--name must be one line of text"],
  ])("exits 2 before calling the gateway for %j", async (flags, message) => {
    const home = await tempHome();
    const { code, stderr } = await cli(["cron", "add", ...flags, "--url", "ws://127.0.0.1:9"], { home });
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });

  it("is refused by the gateway's cron.add as by the CLI: a name with a newline, a line or paragraph separator or a bidi override, one rule (issue #30)", async () => {
    const gw = await startGateway();
    const client = await connectGateway(gw.gateway.url);
    const schedule = { kind: "every", everyMs: 3_600_000 };
    const separators = ["two\u2028lines", "two\u2029paragraphs"];
    const bidi = [
      "invoice\u202Efdp.exe",
      "a\u202Ab",
      "a\u202Bb",
      "a\u202Cb",
      "a\u202Db",
      "x\u2066y\u2069",
      "x\u2067y",
      "x\u2068y",
    ];
    for (const name of ["two\nlines", "trailing\n", ...separators, ...bidi])
      await expect(client.call("cron.add", { name, schedule, message: "m" })).rejects.toMatchObject({
        message: expect.stringContaining(`name ${CRON_NAME_RULE}`),
      });
    expect(await client.call("cron.list", {})).toEqual({ jobs: [] });
    await client.close();
  });

  it("keeps a stored job whose name holds a newline or a bidi override (written before names were checked) on one quoted, escaped line of cron list", async () => {
    const home = await tempHome();
    await storeJob(home, { id: "j2", name: "two\nlines" });
    await storeJob(home, { id: "j3", name: "invoice\u202Efdp.exe" });
    const gw = await startGateway({ home });
    const { code, stdout } = await cli(["cron", "list", "--url", gw.gateway.url], { home });
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringContaining('  "two\\nlines"  every'),
        expect.stringContaining('  "invoice\\u202efdp.exe"  every'),
      ]),
    );
  });

  it("lists the jobs from the state when no gateway runs", async () => {
    const home = await tempHome();
    await writeFile(path.join(home, "switchboard.json5"), "{ gateway: { port: 1 } }"); // no gateway answers there
    await storeJob(home, { id: "j1", name: "brief" });
    const { code, stdout, stderr } = await cli(["cron", "list"], { home });
    expect(code).toBe(0);
    expect(stderr).toContain("no gateway runs on");
    expect(stderr).toContain("the jobs below are read from the state");
    expect(stdout.trimEnd().split("\n")).toEqual([expect.stringMatching(/^j1 {2}brief {2}every 60s {2}next /)]);
  });

  it("says how to start a gateway when none answers", async () => {
    const home = await tempHome();
    const { code, stderr } = await cli(["cron", "list", "--url", "ws://127.0.0.1:9"], { home });
    expect(code).toBe(1);
    expect(stderr).toContain("no gateway answers at ws://127.0.0.1:9");
  });
});
