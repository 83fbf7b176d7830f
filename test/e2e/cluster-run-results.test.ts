// `agent.wait` across a takeover (docs/scale-out.md "Durable run results"): two real gateway
// processes on one PostgreSQL schema. A run's end is written to `run_results` in the turn's own
// commit, so the gateway that takes the schema over answers `agent.wait` for a run that ended on
// the SIGKILLed owner, and for a run the SIGKILL cut, which it runs again under the same run id.
import { describe, expect, it } from "vitest";
import type { PlaybookRule } from "../fakes/playbook-model.js";
import { useClusterClients } from "../support/cluster-clients.js";
import type { Cluster } from "../support/cluster-harness.js";
import { until } from "../support/gateway-child.js";

const { startCluster, fakeTelegram, client } = useClusterClients();

/** The re-run's model step is slow, so `agent.wait` reaches the new owner before it ends. */
const SLOW_MS = 6_000;
const PLAY: PlaybookRule[] = [
  { when: "quick question", first: { text: "quick answer" } },
  { when: "slow question", first: { text: "slow answer", delayMs: SLOW_MS } },
];

/** Two gateways (a 60 s TTL: a takeover within seconds came from the liveness lock); the first owns the schema. */
async function twoGateways(): Promise<Cluster> {
  const fake = await fakeTelegram();
  return startCluster({
    size: 2,
    cluster: { leaseTtlMs: 60_000, heartbeatMs: 1_000 },
    env: { SB_API_ROOT: fake.apiRoot, SB_PLAY: JSON.stringify(PLAY) },
  });
}

/** What `agent.wait` answers (a run record, or a timeout). */
interface Waited {
  runId: string;
  status: string;
  text?: string;
  error?: string;
}

const resultRows = (cluster: Cluster, runId: string) =>
  cluster.query<{ status: string; text: string | null }>("SELECT status, text FROM run_results WHERE run_id = $1", [
    runId,
  ]);

describe("agent.wait across a takeover", () => {
  it("answers, on the new owner, the text of a run that ended on the SIGKILLed owner", async () => {
    const cluster = await twoGateways();
    const first = await cluster.owner();
    const onFirst = await client(first.port);
    const { runId } = await onFirst.call<{ runId: string }>("agent", { message: "quick question" });
    const ended = await onFirst.call<Waited>("agent.wait", { runId, timeoutMs: 30_000 });
    expect(ended).toMatchObject({ runId, status: "ok", text: "quick answer" });
    expect(await resultRows(cluster, runId)).toEqual([{ status: "ok", text: "quick answer" }]);

    await cluster.kill(first);
    const second = await cluster.owner({ not: first });
    const onSecond = await client(second.port);
    const waited = await onSecond.call<Waited>("agent.wait", { runId, timeoutMs: 5_000 });
    expect(waited).toMatchObject({ runId, status: "ok", text: "quick answer" });
  }, 120_000);

  it("answers, on the new owner, the text of the re-run of a run the SIGKILL cut mid-turn", async () => {
    const cluster = await twoGateways();
    const first = await cluster.owner();
    const onFirst = await client(first.port);
    const { runId } = await onFirst.call<{ runId: string }>("agent", { message: "slow question" });
    // Killed inside the slow model step: the turn is stored and started, nothing of its end is.
    await until(async () => (await cluster.rows("inbox")).some((r) => r.value.runId === runId && r.value.starts === 1));
    await cluster.kill(first);
    expect(await resultRows(cluster, runId)).toEqual([]);

    const second = await cluster.owner({ not: first });
    const onSecond = await client(second.port);
    // Sent before the re-run ends: its model step alone takes SLOW_MS.
    const asked = Date.now();
    const waiting = onSecond.call<Waited>("agent.wait", { runId, timeoutMs: 30_000 });
    expect(await resultRows(cluster, runId)).toEqual([]);
    const waited = await waiting;
    expect(waited).toMatchObject({ runId, status: "ok", text: "slow answer" });
    expect(Date.now() - asked, "agent.wait waited for the re-run").toBeGreaterThan(500);
    expect(await resultRows(cluster, runId)).toEqual([{ status: "ok", text: "slow answer" }]);
  }, 120_000);
});
