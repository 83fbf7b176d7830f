// Reads a standby answers itself (docs/scale-out.md "Reads on a standby"): two real gateway
// processes on one PostgreSQL schema. A client connected through the standby (its `connect` the
// owner's, as every relayed socket's) asks for `sessions.list`, `sessions.resolve`, `chat.history`
// and `agent.wait` while the owner is SIGSTOPped, so the owner cannot have answered: the standby
// answers from the committed rows, the same answers the owner gave before its pause.
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type GatewayClient, connectGateway } from "../../src/cli/gateway-client.js";
import { type FakeTelegramServer, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import type { PlaybookRule } from "../fakes/playbook-model.js";
import { type Cluster, type ClusterGateway, useCluster } from "../support/cluster-harness.js";
import { usePostgres } from "../support/postgres.js";

const db = usePostgres();
const startCluster = useCluster(db);
const fakes: FakeTelegramServer[] = [];
const clients: GatewayClient[] = [];
const paused: Array<{ cluster: Cluster; gateway: ClusterGateway }> = [];
afterEach(async () => {
  for (const { cluster, gateway } of paused.splice(0)) cluster.resume(gateway);
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  for (const fake of fakes.splice(0)) await fake.close();
});

const PLAY: PlaybookRule[] = [
  { when: "first question", first: { text: "first answer" } },
  { when: "second question", first: { text: "second answer" } },
  { when: "third question", first: { text: "third answer" } },
];
const SESSIONS = ["agent:main:webchat:dm:one", "agent:main:webchat:dm:two", "agent:main:webchat:dm:three"];

async function client(port: number): Promise<GatewayClient> {
  const connected = await connectGateway(`ws://127.0.0.1:${port}`);
  clients.push(connected);
  return connected;
}

/** Two gateways; relayed sockets ping the owner every 5 s, so one stays open well past a pause of a second. */
async function twoGateways(config: Record<string, unknown> = {}): Promise<Cluster> {
  const fake = await startFakeTelegramServer();
  fakes.push(fake);
  return startCluster({
    size: 2,
    cluster: { leaseTtlMs: 60_000, heartbeatMs: 5_000 },
    env: { SB_API_ROOT: fake.apiRoot, SB_PLAY: JSON.stringify(PLAY) },
    config,
  });
}

/** Sends `frames` on a raw socket to `port`, one after another's answer; every answer and the close code. */
async function rawFrames(port: number, frames: unknown[]): Promise<{ answers: unknown[]; closed: number }> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}`);
  const answers: unknown[] = [];
  const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  for (const frame of frames) {
    const answered = new Promise((resolve) => socket.once("message", (data) => resolve(JSON.parse(String(data)))));
    socket.send(JSON.stringify(frame));
    answers.push(await Promise.race([answered, closed.then(() => "closed")]));
  }
  return { answers, closed: await closed };
}

/** The reads both gateways are asked, for the sessions a test wrote. */
function reads(runId: string) {
  return [
    ["sessions.list", {}],
    ["sessions.list", { limit: 2 }],
    ["sessions.list", { search: "two" }],
    ["sessions.list", { label: "second" }],
    ["sessions.resolve", { label: "second" }],
    ["sessions.resolve", { key: SESSIONS[0] }],
    ["chat.history", { sessionKey: SESSIONS[1] }],
    ["chat.history", { sessionKey: SESSIONS[2], limit: 1 }],
    ["chat.history", { sessionKey: "agent:main:webchat:dm:nobody" }],
    ["agent.wait", { runId, timeoutMs: 1_000 }],
  ] as const;
}

/** Each read's answer, or its error's code. */
async function answersOf(on: GatewayClient, asked: ReturnType<typeof reads>): Promise<unknown[]> {
  const answers: unknown[] = [];
  for (const [method, params] of asked)
    answers.push(await on.call(method, params).catch((err: { code?: string }) => ({ error: err.code })));
  return answers;
}

describe("reads on a standby", () => {
  it("answers sessions.list, sessions.resolve, chat.history and agent.wait itself while the owner is SIGSTOPped, as the owner did", async () => {
    const cluster = await twoGateways();
    const owner = await cluster.owner();
    const standby = cluster.gateways.find((g) => g !== owner)!;
    const onOwner = await client(owner.port);
    const runIds: string[] = [];
    for (const [i, word] of ["first", "second", "third"].entries()) {
      const { runId } = await onOwner.call<{ runId: string }>("chat.send", {
        sessionKey: SESSIONS[i],
        message: `${word} question`,
      });
      await onOwner.call("agent.wait", { runId, timeoutMs: 30_000 });
      runIds.push(runId);
    }
    await onOwner.call("sessions.patch", { key: SESSIONS[1], label: "second" });
    await owner.idle();
    const asked = reads(runIds[1]!);
    const fromOwner = await answersOf(onOwner, asked);
    expect((fromOwner[0] as { count: number }).count).toBe(3);

    const onStandby = await client(standby.port);
    cluster.pause(owner);
    paused.push({ cluster, gateway: owner });
    // A call only the owner answers, sent first: still unanswered once every read after it was answered.
    let relayedAnswered = false;
    const relayed = onStandby.call("chat.abort", { sessionKey: SESSIONS[0] }).finally(() => (relayedAnswered = true));
    const fromStandby = await answersOf(onStandby, asked);
    expect(fromStandby).toEqual(fromOwner);
    expect(relayedAnswered, "the paused owner answered nothing").toBe(false);
    cluster.resume(owner);
    paused.splice(0);
    await expect(relayed).resolves.toMatchObject({ ok: true });
  }, 120_000);

  it("answers a read only on a socket whose connect the owner accepted: before it, or after a wrong token, the owner's refusal", async () => {
    const cluster = await twoGateways({ gateway: { auth: { token: "s3cret-token-0123456" } } });
    const owner = await cluster.owner();
    const standby = cluster.gateways.find((g) => g !== owner)!;
    const list = { type: "req", id: "1", method: "sessions.list", params: {} };
    const first = await rawFrames(standby.port, [list]);
    expect(first.answers).toEqual([
      {
        type: "res",
        id: "1",
        ok: false,
        error: { code: "UNAUTHORIZED", message: "the first request must be connect" },
      },
    ]);
    expect(first.closed).toBe(4401);
    const connect = (token: string) => ({ type: "req", id: "c", method: "connect", params: { auth: { token } } });
    const wrong = await rawFrames(standby.port, [connect("guessed")]);
    expect(wrong.answers).toMatchObject([{ id: "c", ok: false, error: { code: "UNAUTHORIZED" } }]);
    expect(wrong.closed).toBe(4401);
    const onStandby = await connectGateway(`ws://127.0.0.1:${standby.port}`, "s3cret-token-0123456");
    clients.push(onStandby);
    // A run the standby cannot read is relayed: the owner's own answer.
    await expect(onStandby.call("agent.wait", { runId: "nobody", timeoutMs: 0 })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    cluster.pause(owner);
    paused.push({ cluster, gateway: owner });
    await expect(onStandby.call("sessions.list", {})).resolves.toEqual({ count: 0, sessions: [] });
  }, 120_000);
});
