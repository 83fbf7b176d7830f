import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { cli, tempHome } from "../../support/fake-cli-io.js";
import { freshSchema, usePostgres } from "../../support/postgres.js";
import { openAsGateway, seedLocalHome, writeConfig } from "./home-fixture.js";

const db = usePostgres();

/** What a gateway opening the home sees: its sessions, their history, the inbox and the outbox. */
async function seenByGateway(home: string, state: object) {
  const opened = await openAsGateway(home, await writeConfig(home, state));
  try {
    const { store, transcripts } = opened.main;
    const history = async (id: string) =>
      (await transcripts.readTail(id, { limit: 100, includeTools: true })).messages.map((m) => [m.role, m.content]);
    return {
      sessions: ["agent:main:main", "agent:main:telegram:dm:42"].map((key) => store.get(key)?.sessionId),
      history: { main: await history("s-main"), dm: await history("s-dm") },
      inbox: opened.inbox.pending().map((entry) => [entry.id, entry.message.text]),
      outbox: opened.outbox.pending().map((item) => [item.id, item.chunks]),
      cron: opened.cron.list().map((job) => [job.id, job.schedule]),
      cronRuns: (await opened.runs.read("daily")).map((run) => run.runId),
      telegramOffset: opened.channels.forChannel("telegram").rows("default").get("offset"),
      whatsapp: opened.channels.forChannel("whatsapp").rows("default").keys(),
      // The archive of the reset session, by name (its time kept) and with its messages.
      archives: await Promise.all(
        (await transcripts.list())
          .filter((t) => t.archivedAt !== undefined)
          .map(async (t) => [t.id, t.archivedAt, await history(t.id)]),
      ),
    };
  } finally {
    await opened.close();
  }
}

/** `state status --json` of a home. */
async function status(home: string) {
  const result = await cli(["state", "status", "--json"], { home });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { backend: string; schemaVersion?: number; counts: Record<string, number> };
}

describe("switchboard state migrate", () => {
  it("moves a local home to PostgreSQL and back to a fresh home: counts equal, a gateway sees the same sessions and history", async () => {
    const home = await tempHome();
    await seedLocalHome(home, await writeConfig(home, { backend: "local" }));
    const before = await seenByGateway(home, { backend: "local" });
    expect(before.history.dm).toHaveLength(3);
    expect(before.archives).toEqual([
      [expect.stringMatching(/^s-old\.jsonl\.deleted\./), 6, [["user", "before the reset"]]],
    ]);
    expect(before.cron).toEqual([["daily", { kind: "cron", expr: "0 9 * * *", tz: "UTC" }]]);
    expect(before).toMatchObject({
      cronRuns: ["run-2", "run-1"],
      telegramOffset: { lastUpdateId: 99 },
      whatsapp: ["creds", "pre-key-1", "pre-key-2"],
    });
    const localStatus = await status(home);
    const schema = freshSchema("mig");
    const up = await cli(["state", "migrate", "--to", "postgres", "--url", db.url, "--schema", schema], { home });
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toContain("count check: ok");
    expect(up.stdout).toMatch(/archives main +1 +1\n/);
    const postgres = { backend: "postgres", postgres: { url: db.url, schema } };
    const pgHome = await tempHome();
    await writeConfig(pgHome, postgres);
    const pgStatus = await status(pgHome);
    expect(pgStatus.schemaVersion).toBeGreaterThan(0);
    expect(pgStatus.counts).toEqual(localStatus.counts);
    expect(pgStatus.counts).toMatchObject({
      "table inbox": 1,
      "table outbox": 1,
      "table channels": 4,
      "table cron-runs": 2,
      "archives main": 1,
      "archived messages main": 1,
      "messages main": 5,
      "workspace main": 2,
    });
    expect(await seenByGateway(pgHome, postgres)).toEqual(before);
    const back = await tempHome();
    await writeConfig(back, postgres);
    const down = await cli(["state", "migrate", "--to", "local"], { home: back });
    expect(down.code, down.stderr).toBe(0);
    expect(down.stdout).toContain("count check: ok");
    expect(await seenByGateway(back, { backend: "local" })).toEqual(before);
    expect((await status(back)).counts).toEqual(localStatus.counts);
  });

  it("refuses a target that is not empty, on either side, and leaves it as it was", async () => {
    const home = await tempHome();
    await seedLocalHome(home, await writeConfig(home, { backend: "local" }));
    const schema = freshSchema("full");
    const args = ["state", "migrate", "--to", "postgres", "--url", db.url, "--schema", schema];
    expect((await cli(args, { home })).code).toBe(0);
    const again = await cli(args, { home });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      /the target postgres:.* \(schema full\w*\) is not empty \(table sessions:main: 2, table inbox: 1, table outbox: 1, table channels: 4, table cron-runs: 2, table cron-jobs: 1, transcripts main: 2, messages main: 5, archives main: 1, archived messages main: 1, workspace main: 2\)/,
    );
    // --to local into a home that has state of its own.
    await writeConfig(home, { backend: "postgres", postgres: { url: db.url, schema } });
    const down = await cli(["state", "migrate", "--to", "local"], { home });
    expect(down.code).toBe(2);
    expect(down.stderr).toContain(`the target ${home} is not empty`);
    expect((await status(home)).counts).toMatchObject({ "table inbox": 1, "messages main": 5 });
  });

  it("refuses while a gateway runs on the home (its gateway.lock names a live process)", async () => {
    const home = await tempHome();
    await seedLocalHome(home, await writeConfig(home, { backend: "local" }));
    const gateway = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    onTestFinished(() => void gateway.kill("SIGKILL"));
    await writeFile(path.join(home, "gateway.lock"), JSON.stringify({ pid: gateway.pid, port: 18789 }));
    const schema = freshSchema("busy");
    const result = await cli(["state", "migrate", "--to", "postgres", "--url", db.url, "--schema", schema], { home });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`another gateway (pid ${gateway.pid}, port 18789) already runs on ${home}`);
    const target = await tempHome();
    await writeConfig(target, { backend: "postgres", postgres: { url: db.url, schema } });
    // Nothing was written: the schema was not even created.
    expect(await status(target)).toMatchObject({ backend: "postgres", schemaVersion: 0, counts: {} });
  });

  it("shows a progress bar on a terminal's stderr, and none when stderr is not a terminal", async () => {
    const home = await tempHome();
    await seedLocalHome(home, await writeConfig(home, { backend: "local" }));
    const args = ["state", "migrate", "--to", "postgres", "--url", db.url, "--schema", freshSchema("bar")];
    const { code, stdout, stderr } = await cli(args, { home, terminalColumns: 100 });
    expect(code).toBe(0);
    expect(stderr).toContain("migrating [");
    expect(stderr).toContain("16/16 rows, transcripts and files");
    expect(stdout).toContain("count check: ok");
    const plain = await cli([...args.slice(0, -1), freshSchema("bar")], { home });
    expect(plain.stderr).toBe("");
  });

  it("says how to name the direction and the database", async () => {
    const home = await tempHome();
    await writeConfig(home, { backend: "local" });
    const bad = await cli(["state", "migrate", "--to", "mysql"], { home });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--to mysql: use --to postgres");
    const url = await cli(["state", "migrate", "--to", "postgres", "--url", "mysql://x"], { home });
    expect(url.code).toBe(2);
    expect(url.stderr).toContain('--url: state.postgres.url: starts with "mysql:"');
  });
});
