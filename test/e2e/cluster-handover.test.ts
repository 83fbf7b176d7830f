// What a SIGKILL of the owner leaves to the standby that takes over (docs/scale-out.md): a
// sub-agent run it had is announced exactly once, by the new owner (an interrupted run is
// `Status: error`), and a cron job due every 2.5 s runs once per due time across three gateways
// over several periods, the owner killed between two of them.
import { afterEach, describe, expect, it } from "vitest";
import { connectGateway } from "../../src/cli/gateway-client.js";
import type { CronJob } from "../../src/cron/cron-job.js";
import { type FakeTelegramServer, adaDm, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import type { PlayStep, PlaybookRule } from "../fakes/playbook-model.js";
import { useCluster } from "../support/cluster-harness.js";
import { until } from "../support/gateway-child.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
const startCluster = useCluster(db);
const fakes: FakeTelegramServer[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

const CLUSTER = { leaseTtlMs: 5_000, heartbeatMs: 1_000 };

/** The main agent spawns a worker whose model step outlasts the test: the run is still going at the kill. */
const spawnThenSay = (when: string, first: PlayStep, then: PlayStep): PlaybookRule => ({ when, first, then });
const SPAWN_PLAY: PlaybookRule[] = [
  // The announce step (the child summing up; its system prompt names the task too) answers at once.
  { when: "Sub-agent announce step", first: { text: "Result: interrupted\nNotes: none" } },
  { when: "dig into topic Q", first: { text: "Result: Q found", delayMs: 600_000 } },
  spawnThenSay(
    "please spawn the researcher",
    { toolCalls: [{ name: "sessions_spawn", input: { task: "dig into topic Q", agentId: "worker" } }] },
    { text: "on it" },
  ),
];
const AGENTS = {
  list: [
    { id: "main", default: true, model: "test/main", subagents: { allowAgents: ["worker"] } },
    { id: "worker", model: "test/worker" },
  ],
};

describe("a SIGKILL of the owner, taken over by a standby", () => {
  it("announces a sub-agent run the killed owner had exactly once, from the new owner, as interrupted", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const cluster = await startCluster({
      size: 3,
      cluster: CLUSTER,
      env: { SB_API_ROOT: fake.apiRoot, SB_PLAY: JSON.stringify(SPAWN_PLAY) },
      config: { agents: AGENTS },
    });
    const first = await cluster.owner();
    fake.push(adaDm("please spawn the researcher", 1));
    // Killed once the worker's run started (its record no longer queued) and the turn that spawned
    // it has ended; the spawn (a stored turn of the child) stays pending until the child ends, and
    // its replay finds the run started and leaves it to the recovery.
    await until(async () => {
      const subagents = await cluster.rows("subagents");
      const inbox = await cluster.rows("inbox");
      return (
        subagents.some((r) => r.value.state === "running" && !r.value.queued) &&
        inbox.every((r) => r.key.startsWith("spawn:") || r.value.status === "done")
      );
    }, 30_000);
    await cluster.kill(first);
    const next = await cluster.owner({ not: first });
    await until(() => fake.sent.some((s) => s.text.includes("Status:")), 30_000);
    await next.idle();
    const announces = fake.sent.filter((s) => s.text.includes("Status:"));
    expect(announces).toHaveLength(1);
    expect(announces[0]).toMatchObject({ chatId: "111" });
    expect(announces[0]!.text).toContain("Status: error");
    expect(fake.sent.filter((s) => s.text === "on it")).toHaveLength(1);
  }, 90_000);

  it("runs a cron job due every 2.5 s once per due time across three gateways, the owner killed between two periods", async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    const cluster = await startCluster({ size: 3, cluster: CLUSTER, env: { SB_API_ROOT: fake.apiRoot } });
    const first = await cluster.owner();
    const everyMs = 2_500;
    const anchorMs = Date.now() + 1_000;
    const client = await connectGateway(`ws://127.0.0.1:${first.port}`);
    const { job } = await client.call<{ job: CronJob }>("cron.add", {
      name: "tick",
      schedule: { kind: "every", everyMs, anchorMs },
      message: "cron tick",
    });
    await client.close();
    const runs = async () =>
      (await cluster.rows("cron-runs"))
        .map((r) => r.value as { jobId: string; startedAt: number; status: string })
        .filter((r) => r.jobId === job.id);
    await until(async () => (await runs()).length >= 2, 30_000);
    // Right after a run is recorded: the next one is due in about 2.5 s.
    const beforeKill = (await runs()).length;
    await cluster.kill(first);
    const killedAt = Date.now();
    const next = await cluster.owner({ not: first });
    await until(async () => (await runs()).filter((r) => r.startedAt > killedAt).length >= 3, 60_000);
    await next.idle();
    const done = await runs();
    // Each run falls in the period of its due time (anchor + k * everyMs); at most one per period.
    const periods = done.map((r) => Math.floor((r.startedAt - anchorMs) / everyMs));
    expect(new Set(periods).size, JSON.stringify(periods)).toBe(periods.length);
    // None missed but while no gateway owned the schema (a job missed meanwhile runs once, late: a catch-up).
    const gaps = periods.slice(1).filter((p, i) => p !== periods[i]! + 1 && i + 1 !== beforeKill);
    expect(gaps, JSON.stringify(periods)).toEqual([]);
    expect(done.every((r) => r.status === "ok")).toBe(true);
    process.stderr.write(
      `cluster cron: ${done.length} runs in periods ${periods.join(",")}; owner killed after period ${periods[beforeKill - 1]}\n`,
    );
  }, 90_000);
});
