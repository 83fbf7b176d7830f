// What used to stay in files on the postgres backend, now rows of the database: a real gateway
// process with the real Telegram adapter, SIGKILLed and restarted, resumes polling from the offset
// stored in PostgreSQL (no update handled twice, none lost, no offset file in the home); cron run
// logs are rows that `switchboard cron runs` lists, also after a restart.
import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { cli } from "../support/fake-cli-io.js";
import { killHard, until, useGatewayChildren } from "../support/gateway-child.js";
import { freshSchema, usePostgres } from "../support/postgres.js";
import { startTestGateway, tempHome, useTestGateways } from "../support/test-gateway.js";

const db = usePostgres();
const startChild = useGatewayChildren();
const startGateway = useTestGateways();
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

/** Rows of `state_rows` in `schema` of table `tbl`, by key. */
async function rowsOf(schema: string, tbl: string): Promise<Map<string, unknown>> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ key: string; value: unknown }>(
      `SELECT key, value FROM ${schema}.state_rows WHERE tbl = $1 ORDER BY ord`,
      [tbl],
    );
    return new Map(rows.map((row) => [row.key, row.value]));
  } finally {
    await client.end();
  }
}

/** The Telegram offset the database holds for the default account. */
async function storedOffset(schema: string): Promise<number | undefined> {
  const row = (await rowsOf(schema, "channels")).get("telegram/default/offset") as
    | { value: { lastUpdateId: number } }
    | undefined;
  return row?.value.lastUpdateId;
}

describe("channel state and cron run logs on PostgreSQL", () => {
  it("resumes Telegram polling after a SIGKILL from the offset in the database: none lost, none twice, no offset file", async () => {
    // Telegram keeps confirmed updates too: only the offset the gateway asks from keeps them from coming again.
    const fake = await startFakeTelegramServer({ forgetConfirmed: false });
    fakes.push(fake);
    const home = await tempHome();
    const schema = freshSchema();
    const state = { backend: "postgres", postgres: { url: db.url, schema, poolSize: 4 } };
    const env = { SB_HOME: home, SB_API_ROOT: fake.apiRoot, SB_STATE: JSON.stringify(state) };
    let child = await startChild("platform-gateway-process.ts", env);
    for (let i = 1; i <= 10; i++) fake.push(adaDm(`before ${i}`, i));
    await until(() => fake.sent.length >= 10, 30_000);
    await until(async () => (await storedOffset(schema)) === 10);
    await killHard(child);
    for (let i = 11; i <= 15; i++) fake.push(adaDm(`after ${i}`, i));
    const polledBefore = fake.callsTo("getUpdates").length;
    child = await startChild("platform-gateway-process.ts", env);
    await until(() => fake.sent.length >= 15, 30_000);
    await child.idle();
    // The restarted poll asked from the stored offset, so Telegram's older updates never came again.
    expect(fake.callsTo("getUpdates")[polledBefore]!.body.offset).toBe(11);
    const replies = fake.sent.map((sent) => sent.text);
    const expected = [
      ...Array.from({ length: 10 }, (_, i) => `Echo: before ${i + 1}`),
      ...Array.from({ length: 5 }, (_, i) => `Echo: after ${i + 11}`),
    ];
    expect(replies).toEqual(expected);
    await until(async () => (await storedOffset(schema)) === 15);
    expect(await readdir(home)).not.toContain("channels");
  }, 90_000);

  it("keeps cron run logs as rows that `cron runs` lists, after a restart too, with no run log files", async () => {
    const schema = freshSchema();
    const config = { state: { backend: "postgres", postgres: { url: db.url, schema } } };
    // Closed here (a second close of a PostgreSQL gateway fails); the restarted one is closed after the test.
    const first = await startTestGateway({ config });
    await writeFile(path.join(first.home, "switchboard.json5"), JSON.stringify(config));
    const client = await first.client();
    const { job } = await client.call<{ job: { id: string } }>("cron.add", {
      name: "brief",
      schedule: { kind: "every", everyMs: 3_600_000 },
      message: "say hi",
    });
    const { runId } = await client.call<{ runId: string }>("cron.run", { id: job.id });
    await client.call("agent.wait", { runId, timeoutMs: 30_000 });
    await until(async () => (await rowsOf(schema, "cron-runs")).size === 1);
    await first.close();
    const second = await startGateway({ config, home: first.home });
    const listed = await cli(["cron", "runs", job.id, "--json", "--url", second.gateway.url], { home: first.home });
    expect(listed.code, listed.stderr).toBe(0);
    const { runs } = JSON.parse(listed.stdout) as { runs: Array<{ runId: string; status: string; trigger: string }> };
    expect(runs).toEqual([expect.objectContaining({ runId, status: "ok", trigger: "manual" })]);
    const plain = await cli(["cron", "runs", job.id, "--url", second.gateway.url], { home: first.home });
    expect(plain.stdout).toContain("ok");
    expect(await readdir(first.home)).not.toContain("cron");
  }, 60_000);
});
