// Cron in `cluster.owners: "many"` (docs/scale-out.md "N owners", "Cron in many mode"): the global
// holder (writer lease) runs the scheduler; a job's run is a stored turn of its session, forwarded
// to that session's partition owner, which runs it and sends its announce. Each due time runs once,
// its run-log row says how it ended and whether its announce went out, across a SIGKILL of the
// global holder between two periods (the scheduler moves to the next global holder), and across a
// SIGKILL of the member running a job's session (its partition moves to another member).
import { afterEach, describe, expect, it } from "vitest";
import { connectGateway } from "../../src/cli/gateway-client.js";
import type { CronJob } from "../../src/cron/cron-job.js";
import { partOf } from "../../src/routing/partition.js";
import { type FakeTelegramServer, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { type Cluster, type ClusterGateway, useCluster } from "../support/cluster-harness.js";
import { settledSplit } from "../support/cluster-many.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
const startCluster = useCluster(db);
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

const CLUSTER = { leaseTtlMs: 5_000, heartbeatMs: 500, owners: "many" as const };
const EVERY_MS = 2_500;

/** A cron session key (`agent:main:cron:<name>`) whose partition `node` holds in `split`. */
function keyHeldBy(split: Map<string, number[]>, node: string): string {
  const parts = new Set(split.get(node));
  for (let i = 0; ; i++) {
    const key = `agent:main:cron:tick-${i}`;
    if (parts.has(partOf(key))) return key;
  }
}

type RunRow = {
  jobId: string;
  startedAt: number;
  endedAt: number;
  status: string;
  delivered?: boolean;
  delivery?: string;
  error?: string;
};

/** The run-log rows of `jobId`, oldest first. */
async function runsOf(cluster: Cluster, jobId: string): Promise<RunRow[]> {
  return (await cluster.rows("cron-runs"))
    .map((r) => r.value as RunRow)
    .filter((r) => r.jobId === jobId)
    .sort((a, b) => a.startedAt - b.startedAt);
}

/** The period (k of anchor + k * EVERY_MS) each run started in. */
const periodsOf = (runs: RunRow[], anchorMs: number) =>
  runs.map((r) => Math.floor((r.startedAt - anchorMs) / EVERY_MS));

/** The integers from `from` up to `to`, `to` excluded. */
const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);

type Job = { job: CronJob; text: string; chat: string };

/**
 * One job per member in `members`, its session in that member's share, due every EVERY_MS from
 * `anchorMs`, all announced to the fake's chat 111: two owners announcing to one chat share its send
 * lane, each releasing it once its announce went (docs/scale-out.md "Sends claimed per chat lane").
 */
async function addJobs(global: ClusterGateway, split: Map<string, number[]>, members: ClusterGateway[]) {
  const anchorMs = Date.now() + 1_000;
  const client = await connectGateway(`ws://127.0.0.1:${global.port}`);
  const jobs: Job[] = [];
  for (const member of members) {
    const text = `cron tick for ${member.name}`;
    const chat = "111";
    const { job } = await client.call<{ job: CronJob }>("cron.add", {
      name: `tick ${member.name}`,
      schedule: { kind: "every", everyMs: EVERY_MS, anchorMs },
      message: text,
      session: keyHeldBy(split, member.name),
      delivery: { mode: "announce", to: `telegram:${chat}` },
    });
    jobs.push({ job, text, chat });
  }
  await client.close();
  return { jobs, anchorMs };
}

/**
 * Each due time of a job ran at most once; none missed but in `outage` (no gateway ran the
 * scheduler or the session) or while the job's previous run went on (a missed due time runs once,
 * late); every run `ok` with its announce handed over, and at the fake. The jobs keep running:
 * announces counted first, runs read after, at most one more announce (a run in flight is
 * announced before it is recorded).
 */
async function expectOncePerDueTime(
  fake: FakeTelegramServer,
  jobs: Job[],
  runsNow: () => Promise<RunRow[][]>,
  anchorMs: number,
  outage: [number, number],
) {
  const sends = ({ text, chat }: Job) => fake.sent.filter((s) => s.chatId === chat && s.text.includes(text)).length;
  const recorded = await runsNow();
  await until(() => jobs.every((job, i) => sends(job) >= recorded[i]!.length), 30_000);
  const sent = jobs.map(sends);
  const done = await runsNow();
  const dueOf = (p: number) => anchorMs + p * EVERY_MS;
  for (const [i, { job }] of jobs.entries()) {
    const runs = done[i]!;
    const periods = periodsOf(runs, anchorMs);
    expect(new Set(periods).size, JSON.stringify(periods)).toBe(periods.length);
    const excused = (p: number, k: number) =>
      (dueOf(p) >= outage[0] && dueOf(p) <= outage[1]) || dueOf(p) <= runs[k]!.endedAt;
    const missed = periods.slice(1).flatMap((p, k) => range(periods[k]! + 1, p).filter((q) => !excused(q, k)));
    expect(missed, JSON.stringify(runs)).toEqual([]);
    expect(runs.map((r) => [r.status, r.delivered, r.error])).toEqual(runs.map(() => ["ok", true, undefined]));
    expect(runs.every((r) => r.delivery === "delivered" || r.delivery === "queued")).toBe(true);
    expect(sent[i]).toBeLessThanOrEqual(runs.length + 1);
    process.stderr.write(
      `many cron ${job.name}: ${runs.length} runs in periods ${periods.join(",")}, ${sent[i]} announces; killed in period ${Math.floor((outage[0] - anchorMs) / EVERY_MS)}\n`,
    );
  }
}

describe('cron in cluster.owners: "many"', () => {
  it("runs jobs whose sessions other gateways own once per due time, each announced by the session's owner, the global holder killed between two periods", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const cluster = await startCluster({
      size: 3,
      cluster: CLUSTER,
      env: { SB_API_ROOT: fake.apiRoot, SB_LOG_LEVEL: "info" },
    });
    const split = await settledSplit(cluster);
    const global = await cluster.owner();
    const { jobs, anchorMs } = await addJobs(
      global,
      split,
      cluster.gateways.filter((g) => g !== global),
    );
    const allRuns = async () => Promise.all(jobs.map(({ job }) => runsOf(cluster, job.id)));
    await until(async () => (await allRuns()).every((runs) => runs.length >= 2), 30_000);
    await cluster.kill(global);
    const killedAt = Date.now();
    const next = await cluster.owner({ not: global });
    const tookOverAt = Date.now();
    const afterKill = async () =>
      (await allRuns()).every((runs) => runs.filter((r) => r.startedAt > killedAt).length >= 3);
    await until(afterKill, 60_000);
    await next.idle();
    await expectOncePerDueTime(fake, jobs, allRuns, anchorMs, [killedAt, tookOverAt]);
  }, 120_000);

  it("runs a job once per due time across a SIGKILL of the member running its session: the partition's next holder runs it", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const cluster = await startCluster({
      size: 3,
      cluster: CLUSTER,
      env: { SB_API_ROOT: fake.apiRoot, SB_LOG_LEVEL: "info" },
    });
    const split = await settledSplit(cluster);
    const global = await cluster.owner();
    const victim = cluster.gateways.find((g) => g !== global)!;
    const { jobs, anchorMs } = await addJobs(global, split, [victim]);
    const runs = async () => [await runsOf(cluster, jobs[0]!.job.id)];
    await until(async () => (await runs())[0]!.length >= 2, 30_000);
    await cluster.kill(victim);
    const killedAt = Date.now();
    const survivors = cluster.gateways.filter((g) => g !== victim);
    await settledSplit(cluster, survivors);
    const settledAt = Date.now();
    await until(async () => (await runs())[0]!.filter((r) => r.startedAt > settledAt).length >= 3, 60_000);
    await global.idle();
    await expectOncePerDueTime(fake, jobs, runs, anchorMs, [killedAt, settledAt]);
  }, 120_000);
});
