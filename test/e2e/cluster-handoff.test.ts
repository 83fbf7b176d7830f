// Hooks POSTed to a standby are stored there, in the hand-off inbox, and taken in by the owner
// (docs/scale-out.md "Inbound anywhere", migration 0006): real gateway processes on one real
// PostgreSQL schema, the real Telegram adapter on the fake Bot API (where each hook's reply is
// delivered), the owner stopped by SIGSTOP or killed by SIGKILL.
import { describe, expect, it } from "vitest";
import { adaDm } from "../fakes/fake-telegram-server.js";
import type { Cluster } from "../support/cluster-harness.js";
import { until } from "../support/gateway-child.js";
import {
  type HookAnswer,
  expectAnsweredOnce,
  inboxRunIds,
  postHook,
  useHandoffCluster,
} from "../support/handoff-cluster.js";
import { rawRequest } from "../support/raw-gateway.js";

const { startCluster, startFake, twoGateways } = useHandoffCluster();

const handoffRows = (cluster: Cluster) =>
  cluster.query<{ dedupe_key: string }>("SELECT dedupe_key FROM inbound_handoff");

describe("hooks POSTed to a standby (the hand-off inbox)", () => {
  it("answers 202 at once while the owner is SIGSTOPped; the standby takes over and runs each once under the run id it promised; continued, the old owner runs none", async () => {
    // A 10 s TTL: a relay to the paused owner would answer only once the lease expired.
    const { fake, cluster, owner, standby } = await twoGateways({ leaseTtlMs: 10_000, heartbeatMs: 500 });
    cluster.pause(owner);
    const messages = [1, 2, 3, 4, 5].map((i) => `while paused ${i}`);
    const answers: HookAnswer[] = [];
    for (const [i, message] of messages.entries())
      answers.push(await postHook(standby.port, 3001, message, `paused-${i + 1}`));
    expect(answers.map((a) => [a.status, a.body.ok, a.body.duplicate])).toEqual(
      messages.map(() => [202, true, undefined]),
    );
    // Answered by the standby itself: each well below the lease TTL a relay to the paused owner waits out.
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(5_000);
    const next = await cluster.owner({ not: owner });
    expect(next).toBe(standby);
    await expectAnsweredOnce(fake, new Map([[3001, messages]]), next);
    const ranUnder = await inboxRunIds(cluster);
    expect(answers.map((_, i) => ranUnder.get(`paused-${i + 1}`))).toEqual(answers.map((a) => a.body.runId));
    expect(await handoffRows(cluster)).toEqual([]);

    const sentBefore = fake.sent.length;
    cluster.resume(owner);
    expect(await owner.exited).toEqual({ code: 1, signal: null });
    expect(fake.sent.length).toBe(sentBefore);
    process.stderr.write(
      `handoff: 5 hooks answered by the standby in ${answers.map((a) => a.ms.toFixed(1)).join(", ")} ms while the owner was paused\n`,
    );
  }, 120_000);

  it("runs hooks POSTed to a standby on the owner, woken by NOTIFY (far within a heartbeat), in order with the hooks POSTed to the owner", async () => {
    // A 30 s heartbeat: the safety net cannot be what woke the owner.
    const { fake, owner, standby } = await twoGateways({ leaseTtlMs: 90_000, heartbeatMs: 30_000 }, "info");
    // Alone on the standby, each answered before the next: only the NOTIFY can wake the owner.
    const alone = [1, 2, 3].map((i) => `alone ${i}`);
    const aloneAnswers: HookAnswer[] = [];
    for (const message of alone) {
      aloneAnswers.push(await postHook(standby.port, 3002, message));
      await until(() => fake.sent.some((s) => s.text === `Echo: ${message}`), 10_000);
    }
    // Then alternating with the owner: the owner takes in what the standby stored before its own hook.
    const mixed = Array.from({ length: 10 }, (_, i) => `mixed ${i + 1}`);
    const mixedAnswers: HookAnswer[] = [];
    for (const [i, message] of mixed.entries())
      mixedAnswers.push(await postHook(i % 2 === 0 ? standby.port : owner.port, 3002, message));
    expect([...aloneAnswers, ...mixedAnswers].map((a) => a.status)).toEqual([...alone, ...mixed].map(() => 202));
    await expectAnsweredOnce(fake, new Map([[3002, [...alone, ...mixed]]]), owner);
    const ages = owner
      .stderr()
      .split("\n")
      .filter((l) => l.includes("took in inbound another gateway stored"))
      .map((l) => JSON.parse(l).ageMs as number);
    expect(ages).toHaveLength(8);
    // Far within a heartbeat (each also waited for above with a 10 s bound, a third of it).
    expect(Math.max(...ages.slice(0, 3))).toBeLessThan(7_500);
    const standbyMs = [...aloneAnswers, ...mixedAnswers.filter((_, i) => i % 2 === 0)].map((a) => a.ms.toFixed(1));
    process.stderr.write(
      `handoff: standby answered in ${standbyMs.join(", ")} ms; owner took each in ${ages.join(", ")} ms after its commit (first 3 by NOTIFY alone)\n`,
    );
  }, 120_000);

  it("runs a hook once when its idempotency key is POSTed to both gateways: the second answer is duplicate with the first run id, in either order", async () => {
    const { fake, cluster, owner, standby } = await twoGateways({ leaseTtlMs: 30_000, heartbeatMs: 10_000 });
    const first = await postHook(owner.port, 3003, "owner first", "both-1");
    const second = await postHook(standby.port, 3003, "owner first", "both-1");
    const third = await postHook(standby.port, 3004, "standby first", "both-2");
    const fourth = await postHook(owner.port, 3004, "standby first", "both-2");
    expect([first, second, third, fourth].map((a) => [a.status, a.body.duplicate])).toEqual([
      [202, undefined],
      [202, true],
      [202, undefined],
      [202, true],
    ]);
    expect(second.body.runId).toBe(first.body.runId);
    expect(fourth.body.runId).toBe(third.body.runId);
    await expectAnsweredOnce(
      fake,
      new Map([
        [3003, ["owner first"]],
        [3004, ["standby first"]],
      ]),
      owner,
    );
    // After it ran: the standby reads the owner's dedupe.
    const late = await postHook(standby.port, 3004, "standby first", "both-2");
    expect([late.status, late.body.duplicate, late.body.runId]).toEqual([202, true, third.body.runId]);
    const ranUnder = await inboxRunIds(cluster);
    expect([ranUnder.get("both-1"), ranUnder.get("both-2")]).toEqual([first.body.runId, third.body.runId]);
  }, 120_000);

  it("drains, once each, the hooks a SIGKILLed owner had stored for it but not taken in", async () => {
    // A 60 s TTL: only the liveness lock freeing at the kill can give the standby the schema.
    const { fake, cluster, owner, standby } = await twoGateways({ leaseTtlMs: 60_000, heartbeatMs: 3_000 });
    cluster.pause(owner);
    const messages = [1, 2, 3].map((i) => `stored for the dead ${i}`);
    for (const message of messages) expect((await postHook(standby.port, 3005, message)).status).toBe(202);
    expect(await handoffRows(cluster)).toHaveLength(3);
    await cluster.kill(owner);
    const next = await cluster.owner({ not: owner, timeoutMs: 10_000 });
    await expectAnsweredOnce(fake, new Map([[3005, messages]]), next);
    expect(await handoffRows(cluster)).toEqual([]);
  }, 120_000);

  it("stores a Telegram webhook update POSTed to a standby for the owner: answered once, also while the owner is SIGSTOPped, and once when the same update_id reaches both gateways", async () => {
    const fake = await startFake();
    const webhook = { webhookUrl: "https://bot.example.com/telegram-webhook", webhookSecret: "s3cret-webhook" };
    const cluster = await startCluster({
      size: 2,
      cluster: { leaseTtlMs: 10_000, heartbeatMs: 500 },
      env: { SB_API_ROOT: fake.apiRoot, SB_TELEGRAM: JSON.stringify(webhook) },
    });
    const owner = await cluster.owner();
    const standby = cluster.gateways.find((g) => g !== owner)!;
    const postUpdate = async (port: number, text: string, updateId: number, secret = webhook.webhookSecret) => {
      const headers = { "content-type": "application/json", "x-telegram-bot-api-secret-token": secret };
      const body = JSON.stringify({ update_id: updateId, ...adaDm(text, updateId) });
      const began = performance.now();
      const answer = await rawRequest(port, { method: "POST", path: "/telegram-webhook", headers, body });
      return { status: answer.status, ms: performance.now() - began };
    };
    // The owner's checks: a wrong secret is refused (401) and nothing is stored.
    expect((await postUpdate(standby.port, "forged", 1, "wrong")).status).toBe(401);
    expect((await postUpdate(standby.port, "via the standby", 2)).status).toBe(200);
    // The same update to both gateways (Telegram retrying where the balancer sends it): one answer.
    expect((await postUpdate(owner.port, "to both", 3)).status).toBe(200);
    expect((await postUpdate(standby.port, "to both", 3)).status).toBe(200);
    expect((await postUpdate(standby.port, "to both", 3)).status).toBe(200);
    await expectAnsweredOnce(fake, new Map([[111, ["via the standby", "to both"]]]), owner);

    cluster.pause(owner);
    const paused = await postUpdate(standby.port, "while paused", 4);
    expect(paused.status).toBe(200);
    // Stored by the standby itself: well below the 10 s TTL a relay to the paused owner waits out.
    expect(paused.ms).toBeLessThan(5_000);
    const next = await cluster.owner({ not: owner });
    await expectAnsweredOnce(fake, new Map([[111, ["via the standby", "to both", "while paused"]]]), next);
    expect(fake.sent.some((s) => s.text.includes("forged"))).toBe(false);
    expect(await handoffRows(cluster)).toEqual([]);
    cluster.resume(owner);
    expect(await owner.exited).toEqual({ code: 1, signal: null });
  }, 120_000);
});
