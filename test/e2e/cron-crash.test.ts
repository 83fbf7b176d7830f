// The promise of docs/automation.md "Failures and restarts" for a cron run a crash cuts, tried with
// real gateway processes and the real Telegram adapter on the fake Bot API: the run is a stored turn
// of its session's inbox, so after a SIGKILL mid-turn the next start replays it once under the same
// run id, its announce reaches the chat once, the run log has one outcome for that due time, and the
// job's next due time is the one its schedule gives. On local files and on PostgreSQL.
import path from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import type { CronJob } from "../../src/cron/cron-job.js";
import type { CronRunRecord } from "../../src/cron/cron-run-log.js";
import { type FakeTelegramServer, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { type GatewayChild, callChild, killHard, until, useGatewayChildren } from "../support/gateway-child.js";
import { freshSchema, usePostgres } from "../support/postgres.js";
import { readStateFile } from "../support/read-state-file.js";
import { tempHome } from "../support/test-gateway.js";

const start = useGatewayChildren();
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

const HOUR = 3_600_000;

/** Where a test's gateways keep their state, and how the test reads a job as it is on disk (or in the database). */
interface Backend {
  env: Record<string, string>;
  storedJob(id: string): Promise<CronJob | undefined>;
  /** PostgreSQL: whether the run's `run_results` row and its inbox entry's done were one commit (same xmin) */
  endedWithEntry?(runId: string): Promise<boolean>;
}

async function localBackend(): Promise<Backend> {
  const home = await tempHome();
  return {
    env: { SB_HOME: home },
    async storedJob(id) {
      const rows = await readStateFile(path.join(home, "cron", "jobs.json"), path.join(home, "state"));
      return rows[id] as CronJob | undefined;
    },
  };
}

async function postgresBackend(url: string): Promise<Backend> {
  const schema = freshSchema();
  const state = { backend: "postgres", postgres: { url, schema, poolSize: 4 } };
  const query = async <T extends object>(sql: string, params: unknown[]): Promise<T[]> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end();
    }
  };
  return {
    env: { SB_HOME: await tempHome(), SB_STATE: JSON.stringify(state) },
    async storedJob(id) {
      const sql = `SELECT value FROM ${schema}.state_rows WHERE tbl = 'cron-jobs' AND key = $1`;
      return (await query<{ value: CronJob }>(sql, [id]))[0]?.value;
    },
    async endedWithEntry(runId) {
      const sql = `SELECT r.xmin::text = i.xmin::text AS same FROM ${schema}.run_results r
        JOIN ${schema}.state_rows i ON i.tbl = 'inbox' AND i.value->>'runId' = r.run_id AND i.value->>'status' = 'done'
        WHERE r.run_id = $1`;
      return (await query<{ same: boolean }>(sql, [runId]))[0]?.same === true;
    },
  };
}

/**
 * A job due in 1.5 s and then hourly, announcing to Ada's chat: the first life's model hangs in
 * that run, and the gateway is SIGKILLed once the run is stored and its start is on disk; a second
 * life (the echo model) and a third are started on the same state.
 */
async function crashMidCronTurn(backend: Backend, beforeKill?: (first: GatewayChild, job: CronJob) => Promise<void>) {
  const fake = await startFakeTelegramServer();
  fakes.push(fake);
  const env = { ...backend.env, SB_API_ROOT: fake.apiRoot };
  const hang = JSON.stringify([{ text: "never said", delayMs: 600_000 }]);
  const first = await start("platform-gateway-process.ts", { ...env, SB_STEPS: hang });
  const dueAt = Date.now() + 1500;
  const { job } = await callChild<{ job: CronJob }>(first, "cron.add", {
    name: "brief",
    schedule: { kind: "every", everyMs: HOUR, anchorMs: dueAt },
    message: "summarise the night",
    delivery: { mode: "announce", to: "telegram:111" },
  });
  let runId = "";
  await until(async () => {
    const state = (await backend.storedJob(job.id))?.state;
    if (state?.runningSince === undefined || !state.lastRunId) return false;
    runId = state.lastRunId;
    const run = await callChild<{ error?: string }>(first, "agent.wait", { runId, timeoutMs: 0 });
    return /still running/.test(run.error ?? "");
  });
  await beforeKill?.(first, job);
  await killHard(first);
  return { fake, env, job, runId, dueAt };
}

async function runsOf(child: GatewayChild, id: string): Promise<CronRunRecord[]> {
  return (await callChild<{ runs: CronRunRecord[] }>(child, "cron.runs", { id })).runs;
}

/** The whole promise, on one backend. */
async function replaysOnce(backend: Backend): Promise<void> {
  const { fake, env, job, runId, dueAt } = await crashMidCronTurn(backend);
  const second = await start("platform-gateway-process.ts", env);
  const ended = await callChild<{ status: string; text?: string }>(second, "agent.wait", { runId, timeoutMs: 20_000 });
  expect(ended).toMatchObject({ status: "ok", text: "Echo: summarise the night" });
  await until(async () => (await runsOf(second, job.id)).length > 0);
  await second.idle();
  expect(fake.sent.map((s) => [s.chatId, s.text])).toEqual([["111", "Echo: summarise the night"]]);
  const [run, ...more] = await runsOf(second, job.id);
  expect(more).toEqual([]);
  expect(run).toMatchObject({ runId, status: "ok", delivered: true, trigger: "schedule" });
  const { jobs } = await callChild<{ jobs: CronJob[] }>(second, "cron.list", {});
  expect(jobs[0]!.state).toMatchObject({ nextRunAt: dueAt + HOUR, consecutiveFailures: 0, lastStatus: "ok" });
  expect(jobs[0]!.state.runningSince).toBeUndefined();

  // A third life: the stored turn is done and the outcome recorded; nothing runs or posts again.
  await killHard(second);
  const third = await start("platform-gateway-process.ts", env);
  await third.idle();
  expect(await runsOf(third, job.id)).toHaveLength(1);
  expect(fake.sent).toHaveLength(1);
}

/**
 * The job removed while its run was in progress, then the SIGKILL: the next start does not replay
 * the run, nor the one after; the run still ends (aborted), so `agent.wait` on it gets an answer.
 */
async function removedMeanwhile(backend: Backend): Promise<void> {
  const removeJob = async (first: GatewayChild, job: CronJob) => {
    expect(await callChild(first, "cron.remove", { id: job.id })).toMatchObject({ removed: true });
  };
  const { fake, env, job, runId } = await crashMidCronTurn(backend, removeJob);
  const skipped = "cron job removed since this run was stored: the stored run is not replayed";
  const second = await start("platform-gateway-process.ts", env);
  await until(() => second.stderr().includes(skipped));
  await second.idle();
  expect(second.stderr()).toContain(runId);
  expect(fake.sent).toEqual([]);
  expect(await backend.storedJob(job.id)).toBeUndefined();
  const ended = { status: "aborted", error: `cron job ${job.id} was removed; this run was not replayed` };
  expect(await callChild(second, "agent.wait", { runId, timeoutMs: 20_000 })).toMatchObject(ended);
  if (backend.endedWithEntry) expect(await backend.endedWithEntry(runId)).toBe(true);
  // Its inbox entry is done: a third life neither runs it nor logs it again.
  await killHard(second);
  const third = await start("platform-gateway-process.ts", env);
  await third.idle();
  expect(third.stderr()).not.toContain(skipped);
  expect(fake.sent).toEqual([]);
  // On PostgreSQL the end is stored: a gateway that did not end the run answers for it too.
  if (backend.endedWithEntry)
    expect(await callChild(third, "agent.wait", { runId, timeoutMs: 20_000 })).toMatchObject(ended);
}

describe("a cron run cut by a SIGKILL, on local files", () => {
  it("is replayed once under the same run id after the restart: one announce, one outcome for its due time, the next due time from its schedule", async () => {
    await replaysOnce(await localBackend());
  }, 90_000);

  it("is not replayed when its job was removed while it ran: no turn, no announce, logged once, its run ended as aborted", async () => {
    await removedMeanwhile(await localBackend());
  }, 90_000);
});

describe("a cron run cut by a SIGKILL, on PostgreSQL", () => {
  const db = usePostgres();
  it("is replayed once under the same run id after the restart: one announce, one outcome for its due time, the next due time from its schedule", async () => {
    await replaysOnce(await postgresBackend(db.url));
  }, 90_000);

  it("is not replayed when its job was removed while it ran: no turn, no announce, logged once, its run ended as aborted", async () => {
    await removedMeanwhile(await postgresBackend(db.url));
  }, 90_000);
});
