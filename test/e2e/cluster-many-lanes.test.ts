// One chat, two senders in `cluster.owners: "many"` (docs/scale-out.md "Sends claimed per chat
// lane", "Released when its queue empties"): two cron jobs whose sessions two gateways own announce
// into ONE Telegram chat in turn. A chat's lane is held by one gateway at a time; each gateway
// releases it once its queue to that chat is empty, so the other's next announce takes it at once
// instead of waiting for the claim to run out (20 s here). And a core's stop releases every lane it
// holds: a chat whose session moved to a gateway that joined is answered at once by its new owner.
// A partition with a reply still queued (waiting for its retry) is not given up at a join while
// idle ones can be (the evict's release of its lanes: test/delivery/outbox-adopt.test.ts).
import { afterEach, describe, expect, it } from "vitest";
import { connectGateway } from "../../src/cli/gateway-client.js";
import type { CronJob } from "../../src/cron/cron-job.js";
import { partOf } from "../../src/routing/partition.js";
import { type FakeTelegramServer, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { type Cluster, type ClusterGateway, useCluster } from "../support/cluster-harness.js";
import { settledSplit } from "../support/cluster-many.js";
import { chatsAnswered, pushChats } from "../support/cluster-traffic.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
const startCluster = useCluster(db);
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

const TTL_MS = 20_000;
const CLUSTER = { leaseTtlMs: TTL_MS, heartbeatMs: 500, owners: "many" as const };
const EVERY_MS = 3_000;
/** What a run's announce may take from its run's start (the turn, one claim, a retry delay at worst): far below the TTL. */
const WITHIN_MS = 5_000;

/** A cron session key whose partition `node` holds in `split`. */
function keyHeldBy(split: Map<string, number[]>, node: string): string {
  const parts = new Set(split.get(node));
  for (let i = 0; ; i++) {
    const key = `agent:main:cron:lane-${i}`;
    if (parts.has(partOf(key))) return key;
  }
}

type Job = { job: CronJob; text: string };

/** One job per gateway, its session in that gateway's share, every EVERY_MS, the second half a period later; all announced to chat 111. */
async function addJobs(global: ClusterGateway, split: Map<string, number[]>, owners: ClusterGateway[]) {
  const anchorMs = Date.now() + 1_000;
  const client = await connectGateway(`ws://127.0.0.1:${global.port}`);
  const jobs: Job[] = [];
  for (const [i, owner] of owners.entries()) {
    const text = `lane tick for ${owner.name}`;
    const { job } = await client.call<{ job: CronJob }>("cron.add", {
      name: `lane ${owner.name}`,
      schedule: { kind: "every", everyMs: EVERY_MS, anchorMs: anchorMs + (i * EVERY_MS) / 2 },
      message: text,
      session: keyHeldBy(split, owner.name),
      delivery: { mode: "announce", to: "telegram:111" },
    });
    jobs.push({ job, text });
  }
  await client.close();
  return jobs;
}

/** The start times of `jobId`'s runs, oldest first. */
async function runStarts(cluster: Cluster, jobId: string): Promise<number[]> {
  return (await cluster.rows("cron-runs"))
    .map((r) => r.value as { jobId: string; startedAt: number })
    .filter((r) => r.jobId === jobId)
    .map((r) => r.startedAt)
    .sort((a, b) => a - b);
}

describe('one chat\'s send lane in cluster.owners: "many"', () => {
  it("delivers the announces of two jobs whose sessions two gateways own into one chat in turn, each within a few seconds of its run while a claim lasts 20 s: the lane changes hands between them", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const cluster = await startCluster({
      size: 2,
      cluster: CLUSTER,
      env: { SB_API_ROOT: fake.apiRoot, SB_LOG_LEVEL: "info" },
    });
    const split = await settledSplit(cluster);
    const global = await cluster.owner();
    const other = cluster.gateways.find((g) => g !== global)!;
    const jobs = await addJobs(global, split, [global, other]);
    const announces = ({ text }: Job) => fake.sent.filter((s) => s.chatId === "111" && s.text.includes(text));
    // Four announces each: without the release the second sender waits for a claim the first keeps
    // renewing. A run is announced before it is recorded: its run-log row is waited for too.
    await until(() => jobs.every((job) => announces(job).length >= 4), 60_000);
    const recorded = async () => Promise.all(jobs.map((job) => runStarts(cluster, job.job.id)));
    await until(async () => (await recorded()).every((starts) => starts.length >= 4), 30_000);
    const startsOf = await recorded();
    for (const [i, job] of jobs.entries()) {
      const starts = startsOf[i]!;
      const gaps = announces(job)
        .slice(0, 4)
        .map((sent, k) => sent.at - starts[k]!);
      process.stderr.write(`many lanes ${job.job.name}: announce after its run's start ${gaps.join(", ")} ms\n`);
      expect(
        gaps.every((gap) => gap < WITHIN_MS),
        JSON.stringify(gaps),
      ).toBe(true);
    }
    // The chat's sends alternate between the two senders, and the lane row counts every change of hands.
    const order = fake.sent.filter((s) => s.chatId === "111").map((s) => (s.text.includes(jobs[0]!.text) ? 0 : 1));
    const changes = order.slice(1).filter((who, k) => who !== order[k]).length;
    expect(changes, order.join("")).toBeGreaterThanOrEqual(4);
    const [lane] = await cluster.query<{ fence: string }>("SELECT fence FROM outbox_lanes WHERE lane LIKE '%|111|%'");
    expect(Number(lane!.fence)).toBeGreaterThanOrEqual(changes);
  }, 120_000);

  it("answers at once a chat whose session moved to a gateway that joined: the core that gave it up had released its lane, though claims last 30 s", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const cluster = await startCluster({
      size: 2,
      cluster: { ...CLUSTER, leaseTtlMs: 30_000 },
      env: { SB_API_ROOT: fake.apiRoot, SB_TELEGRAM: JSON.stringify({ dmPolicy: "open" }), SB_LOG_LEVEL: "info" },
      config: { session: { dmScope: "per-channel-peer", queue: { debounceMs: 0 } } },
    });
    await settledSplit(cluster);
    const first = pushChats(fake, 24, 1, 3001);
    await until(() => chatsAnswered(fake, first), 60_000);
    // A third gateway joins: a third of the partitions move to it, evicted from the running cores.
    await cluster.add();
    await settledSplit(cluster);
    const pushedAt = Date.now();
    const second = pushChats(fake, 24, 1, 3001, first);
    await until(() => chatsAnswered(fake, second), 60_000);
    const lanes = await cluster.query<{ lane: string; fence: string }>("SELECT lane, fence FROM outbox_lanes");
    const moved = lanes.filter((row) => Number(row.fence) > 1).map((row) => row.lane);
    const gaps = [...second.keys()].map((chat) => {
      const reply = fake.sent.find((s) => s.text === `Echo: chat ${chat} message 2`)!;
      return reply.at - pushedAt;
    });
    process.stderr.write(
      `many lanes moved ${moved.length} of 24 chats; replies after the push: ${gaps.join(", ")} ms\n`,
    );
    expect(moved.length).toBeGreaterThan(0);
    expect(Math.max(...gaps), JSON.stringify(gaps)).toBeLessThan(WITHIN_MS);
  }, 150_000);

  it("sends at once a reply that waited for its retry while a third gateway joined: the partitions with a reply waiting stayed with their owner (idle ones moved)", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const telegram = { dmPolicy: "open", retry: { minDelayMs: 200, maxDelayMs: 400 } };
    const cluster = await startCluster({
      size: 2,
      cluster: { ...CLUSTER, leaseTtlMs: 30_000 },
      env: { SB_API_ROOT: fake.apiRoot, SB_TELEGRAM: JSON.stringify(telegram), SB_LOG_LEVEL: "info" },
      config: { session: { dmScope: "per-channel-peer", queue: { debounceMs: 0 } } },
    });
    const before = await settledSplit(cluster);
    // Every reply fails (a 502 front) until the third gateway has joined: each chat's queue holds its reply.
    let recover = () => {};
    const failing = fake.failFor(
      "sendMessage",
      { error_code: 502, description: "Bad Gateway" },
      new Promise<void>((resolve) => (recover = resolve)),
    );
    const traffic = pushChats(fake, 24, 1, 4001);
    const tried = () => new Set(fake.callsTo("sendMessage").map((call) => String(call.body.chat_id))).size;
    await until(() => tried() === 24, 60_000);
    await cluster.add();
    const after = await settledSplit(cluster);
    recover();
    await failing;
    const recoveredAt = Date.now();
    await until(() => chatsAnswered(fake, traffic), 60_000);
    // A give-back takes partitions with no work first: each waiting chat's session stayed where it was.
    const ownerOf = (split: Map<string, number[]>, chat: number | string) =>
      [...split].find(([, parts]) => parts.includes(partOf(`agent:main:telegram:dm:${chat}`)))?.[0];
    const stayed = [...traffic.keys()].filter((chat) => ownerOf(before, chat) === ownerOf(after, chat)).length;
    const gaps = [...traffic.keys()].map(
      (chat) => fake.sent.find((s) => s.text === `Echo: chat ${chat} message 1`)!.at - recoveredAt,
    );
    process.stderr.write(
      `many lanes: ${stayed} of 24 waiting chats stayed; replies after the recovery: ${gaps.join(", ")} ms\n`,
    );
    expect(stayed).toBe(24);
    expect(Math.max(...gaps), JSON.stringify(gaps)).toBeLessThan(WITHIN_MS);
  }, 150_000);
});
