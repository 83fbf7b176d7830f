// `chat.send` on a standby is stored there (docs/scale-out.md "Inbound on any gateway"): two real
// gateway processes on one real PostgreSQL schema, a client connected through the standby (its
// `connect` accepted by the owner), the owner stopped by SIGSTOP, then continued or SIGKILLed. The
// standby answers each `chat.send` itself; each turn runs once, counted in the transcripts.
import { afterEach, describe, expect, it } from "vitest";
import { type GatewayClient, connectGateway } from "../../src/cli/gateway-client.js";
import type { Cluster, ClusterGateway } from "../support/cluster-harness.js";
import { until } from "../support/gateway-child.js";
import { useHandoffCluster } from "../support/handoff-cluster.js";
import { afterKillAtHandoffDelete, killAtHandoffDelete, killedAt } from "../support/kill-at-handoff.js";

const { startCluster, startFake, twoGateways } = useHandoffCluster();
const clients: GatewayClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
});

const SESSION = "agent:main:webchat:dm:ada";

async function client(gateway: ClusterGateway): Promise<GatewayClient> {
  const connected = await connectGateway(`ws://127.0.0.1:${gateway.port}`);
  clients.push(connected);
  return connected;
}

type Sent = { runId: string; sessionKey: string; status: string };

/** A `chat.send` into SESSION under `key`, and how long its answer took. */
async function send(on: GatewayClient, message: string, key: string) {
  const began = performance.now();
  const answer = await on.call<Sent>("chat.send", { sessionKey: SESSION, message, idempotencyKey: key });
  return { ...answer, ms: performance.now() - began };
}

/** How many prompts and replies (the offline model echoes) of `text` the transcripts hold: a turn run twice shows two. */
async function turnsOf(c: Cluster, text: string): Promise<[number, number]> {
  const count = async (role: string) =>
    (
      await c.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM transcript_events WHERE message->>'role' = $1 AND strpos(message::text, $2) > 0",
        [role, text],
      )
    )[0]!.n;
  return [await count("user"), await count("assistant")];
}

const handoffRows = async (c: Cluster) => c.query("SELECT dedupe_key FROM inbound_handoff");

describe("chat.send on a standby (the hand-off inbox)", () => {
  it("answers chat.send itself while the owner is SIGSTOPped; continued, the owner runs it once; SIGKILLed, the standby takes over and runs the next once; repeats run nothing", async () => {
    // Relayed sockets ping the owner every 5 s: the client's socket outlives a pause of a second.
    const { cluster: c, owner, standby } = await twoGateways({ leaseTtlMs: 60_000, heartbeatMs: 5_000 });
    const onStandby = await client(standby);
    c.pause(owner);
    const first = await send(onStandby, "while paused one", "paused-1");
    expect(first).toMatchObject({ runId: "paused-1", sessionKey: SESSION, status: "started" });
    expect((await send(onStandby, "while paused one", "paused-1")).status).toBe("duplicate");
    expect(await handoffRows(c)).toHaveLength(1);
    c.resume(owner);
    await until(async () => (await turnsOf(c, "while paused one"))[1] > 0, 30_000);

    c.pause(owner);
    const second = await send(onStandby, "while paused two", "paused-2");
    expect(second).toMatchObject({ runId: "paused-2", status: "started" });
    // A SIGKILL of the stopped owner drops its liveness connection: the standby takes over at once.
    await c.kill(owner);
    const next = await c.owner({ not: owner });
    expect(next).toBe(standby);
    const onNext = await client(next);
    await onNext.call("agent.wait", { runId: "paused-2", timeoutMs: 30_000 });
    // Repeats of both keys, to the new owner: duplicates, nothing run again.
    expect((await send(onNext, "while paused one", "paused-1")).status).toBe("duplicate");
    expect((await send(onNext, "while paused two", "paused-2")).status).toBe("duplicate");
    await next.idle();
    expect([await turnsOf(c, "while paused one"), await turnsOf(c, "while paused two")]).toEqual([
      [1, 1],
      [1, 1],
    ]);
    // Each taken into the owner's inbox under its key, and ended under the run id the standby answered.
    const inbox = (await c.rows("inbox")).map((r) => [r.key, r.value.status]).sort();
    expect(inbox).toEqual(["paused-1", "paused-2"].map((k) => [`webchat:default:${SESSION}:${k}`, "done"]));
    await expect(onNext.call("agent.wait", { runId: "paused-1", timeoutMs: 1_000 })).resolves.toMatchObject({
      status: "ok",
    });
    expect(await handoffRows(c)).toEqual([]);
    process.stderr.write(
      `chat.send on a standby: answered in ${[first.ms, second.ms].map((ms) => ms.toFixed(1)).join(", ")} ms while the owner was paused\n`,
    );
  }, 120_000);

  it("runs a chat.send the standby stored while the owner was SIGSTOPped before one sent to the owner meanwhile: the owner's own waits for the hand-off pass", async () => {
    const { cluster: c, owner, standby } = await twoGateways({ leaseTtlMs: 60_000, heartbeatMs: 5_000 });
    const [onStandby, onOwner] = [await client(standby), await client(owner)];
    c.pause(owner);
    expect((await send(onStandby, "in order: standby's", "order-1")).status).toBe("started");
    // Sent to the stopped owner: it reads the request when continued, with the NOTIFY of the row before it.
    const fromOwner = send(onOwner, "in order: owner's", "order-2");
    c.resume(owner);
    expect((await fromOwner).status).toBe("started");
    for (const runId of ["order-1", "order-2"]) await onOwner.call("agent.wait", { runId, timeoutMs: 30_000 });
    const prompts = await c.query<{ m: string }>(
      "SELECT message::text AS m FROM transcript_events WHERE message->>'role' = 'user' AND strpos(message::text, 'in order: ') > 0 ORDER BY tid, seq",
    );
    expect(prompts.map(({ m }) => (m.includes("standby's") ? "standby" : "owner"))).toEqual(["standby", "owner"]);
  }, 120_000);

  it("aborts a chat.send the standby stored while the owner was SIGSTOPped when a chat.abort follows it on the same socket: the abort waits for the hand-off pass and finds it", async () => {
    const { cluster: c, owner, standby } = await twoGateways({ leaseTtlMs: 60_000, heartbeatMs: 5_000 });
    const onStandby = await client(standby);
    c.pause(owner);
    expect((await send(onStandby, "stored then aborted", "abort-1")).status).toBe("started");
    // Relayed to the stopped owner: it reads the abort when continued, with the NOTIFY of the row before it.
    const abort = onStandby.call<{ aborted: string[]; cleared: number }>("chat.abort", { sessionKey: SESSION });
    c.resume(owner);
    const aborted = await abort;
    // Taken in before the abort ran: the abort names it (before: `aborted: []`, `cleared: 0`, and it ran).
    expect(aborted.aborted.includes("abort-1") || aborted.cleared > 0).toBe(true);
    // Its run ends either way (aborted; or "ok" when the offline model's instant reply was already
    // written as the abort landed: the run's own abort, not the order, docs/scale-out.md).
    await onStandby.call("agent.wait", { runId: "abort-1", timeoutMs: 30_000 });
  }, 120_000);

  it("keeps one socket's order: pipelined chat.sends through the standby while the owner is SIGSTOPped are replied to in order, counted by the owner", async () => {
    const { cluster: c, owner, standby } = await twoGateways({ leaseTtlMs: 60_000, heartbeatMs: 5_000 });
    const onStandby = await client(standby);
    const replies: string[] = [];
    onStandby.onEvent((event, payload) => {
      const delivery = payload as { kind?: string; text?: string };
      if (event === "chat.delivery" && delivery.kind === "reply") replies.push(delivery.text ?? "");
    });
    await onStandby.call("subscribe", { sessionKeys: [SESSION] });
    c.pause(owner);
    const texts = Array.from({ length: 12 }, (_, i) => `in order ${String(i).padStart(2, "0")}`);
    // One socket, the frames written back to back: the standby answers each itself.
    const answers = await Promise.all(texts.map((text, i) => send(onStandby, text, `order-${i}`)));
    expect(answers.map((a) => a.status)).toEqual(texts.map(() => "started"));
    c.resume(owner);
    await until(async () => replies.length >= texts.length, 60_000);
    expect(replies.map((reply) => texts.findIndex((text) => reply.includes(text)))).toEqual(texts.map((_, i) => i));
    // Taken in through the owner's pipeline with its metrics: each counted once.
    const metrics = await (await fetch(`http://127.0.0.1:${owner.port}/metrics`)).text();
    const counted = metrics
      .split("\n")
      .filter((line) => line.startsWith("switchboard_inbound_messages_total{") && line.includes('channel="webchat"'))
      .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
    expect(counted).toBe(texts.length);
  }, 120_000);

  // A failpoint SIGKILLs the owner at the statement that stores the rows' intake and deletes them:
  // before it is sent (all three rows wait, no inbox entry) or once it committed (no row, three
  // entries). One statement for the three: the chat.send rows are taken in together, each row's
  // delete in the commit of its inbox entry. Either way the next owner runs each once.
  for (const at of ["send", "acked"] as const)
    it(`runs each chat.send once when the owner is SIGKILLed at the commit of the rows' intake and delete (${at})`, async () => {
      const fake = await startFake();
      const c = await startCluster({
        size: 2,
        cluster: { leaseTtlMs: 60_000, heartbeatMs: 5_000 },
        env: { SB_API_ROOT: fake.apiRoot, ...(await killAtHandoffDelete(at)) },
      });
      const owner = await c.owner();
      const standby = c.gateways.find((g) => g !== owner)!;
      const onStandby = await client(standby);
      c.pause(owner);
      const texts = [1, 2, 3].map((i) => `killed at ${at} ${i}`);
      for (const [i, text] of texts.entries()) await send(onStandby, text, `${at}-${i + 1}`);
      c.resume(owner);
      expect(await afterKillAtHandoffDelete(c, owner, "webchat:")).toEqual(killedAt(at));
      const next = await c.owner({ not: owner, timeoutMs: 10_000 });
      const onNext = await client(next);
      for (const i of [1, 2, 3]) await onNext.call("agent.wait", { runId: `${at}-${i}`, timeoutMs: 30_000 });
      await next.idle();
      expect(await Promise.all(texts.map((text) => turnsOf(c, text)))).toEqual(texts.map(() => [1, 1]));
      expect(await handoffRows(c)).toEqual([]);
    }, 120_000);
});
