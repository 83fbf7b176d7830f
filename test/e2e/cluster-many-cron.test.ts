// Cron in `cluster.owners: "many"` (docs/scale-out.md "N owners", "Cron in many mode"): the global
// holder (writer lease) runs the scheduler; a job's run is a stored turn of its session, forwarded
// to that session's partition owner, which runs it and sends its announce. Each due time runs once,
// its run-log row says how it ended and whether its announce went out, across a SIGKILL of the
// global holder between two periods (the scheduler moves to the next global holder).
import { afterEach, describe, expect, it } from "vitest";
import { connectGateway } from "../../src/cli/gateway-client.js";
import type { CronJob } from "../../src/cron/cron-job.js";
import { partOf } from "../../src/routing/partition.js";
import { type FakeTelegramServer, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { type Cluster, useCluster } from "../support/cluster-harness.js";
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
    const members = cluster.gateways.filter((g) => g !== global);
    // One job per member that is not the global holder: its session is in that member's share.
    const anchorMs = Date.now() + 1_000;
    const client = await connectGateway(`ws://127.0.0.1:${global.port}`);
    const jobs: Array<{ job: CronJob; text: string }> = [];
    for (const member of members) {
      const text = `cron tick for ${member.name}`;
      const { job } = await client.call<{ job: CronJob }>("cron.add", {
        name: `tick ${member.name}`,
        schedule: { kind: "every", everyMs: EVERY_MS, anchorMs },
        message: text,
        session: keyHeldBy(split, member.name),
        delivery: { mode: "announce", to: "telegram:111" },
      });
      jobs.push({ job, text });
    }
    await client.close();
    const allRuns = async () => Promise.all(jobs.map(({ job }) => runsOf(cluster, job.id)));
    await until(async () => (await allRuns()).every((runs) => runs.length >= 2), 30_000);
    await cluster.kill(global);
    const killedAt = Date.now();
    const next = await cluster.owner({ not: global });
    const tookOverAt = Date.now();
    await until(
      async () => (await allRuns()).every((runs) => runs.filter((r) => r.startedAt > killedAt).length >= 3),
      60_000,
    );
    await next.idle();
    const done = await allRuns();
    const sends = (text: string) => fake.sent.filter((s) => s.chatId === "111" && s.text.includes(text)).length;
    // Every run recorded so far was announced: its announce reached the fake (a run in flight may be announced before it is recorded).
    await until(() => jobs.every(({ text }, i) => sends(text) >= done[i]!.length), 30_000);
    for (const [i, { job, text }] of jobs.entries()) {
      const runs = done[i]!;
      const periods = periodsOf(runs, anchorMs);
      const dueOf = (p: number) => anchorMs + p * EVERY_MS;
      expect(new Set(periods).size, JSON.stringify(periods)).toBe(periods.length);
      // None missed but while no gateway held the writer lease, or while the job's previous run went
      // on (its session's owner reopening its core on a new share): missed due times run once, late.
      const excused = (p: number, k: number) =>
        (dueOf(p) >= killedAt && dueOf(p) <= tookOverAt) || dueOf(p) <= runs[k]!.endedAt;
      const missed = periods.slice(1).flatMap((p, k) => range(periods[k]! + 1, p).filter((q) => !excused(q, k)));
      expect(missed, JSON.stringify(runs)).toEqual([]);
      // Each run ran and its announce went out, as the run log says (forwarded runs read from the schema).
      expect(runs.map((r) => [r.status, r.delivered, r.error])).toEqual(runs.map(() => ["ok", true, undefined]));
      expect(runs.every((r) => r.delivery === "delivered" || r.delivery === "queued")).toBe(true);
      expect(sends(text)).toBeLessThanOrEqual(runs.length + 1);
      process.stderr.write(
        `many cron ${job.name}: ${runs.length} runs in periods ${periods.join(",")}, ${sends(text)} announces; global holder killed in period ${Math.floor((killedAt - anchorMs) / EVERY_MS)}\n`,
      );
    }
  }, 120_000);
});
