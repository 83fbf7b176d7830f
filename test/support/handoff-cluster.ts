// Two gateways (an owner and a standby) on one real PostgreSQL schema with hooks on and the fake
// Telegram Bot API, where each hook's reply is delivered: the hand-off inbox's e2e tests
// (test/e2e/cluster-handoff*.test.ts).
import { afterEach, expect } from "vitest";
import { type FakeTelegramServer, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { type Cluster, type ClusterGateway, type ClusterOptions, useCluster } from "./cluster-harness.js";
import { type ChatTraffic, chatsAnswered, chatsOutcome } from "./cluster-traffic.js";
import { until } from "./gateway-child.js";
import { usePostgres } from "./postgres.js";
import { rawRequest } from "./raw-gateway.js";

/** The hooks' token of every gateway these tests start. */
const HOOK_TOKEN = "handoff-hook-token-0123456789";

/** A hook's answer and how long it took. */
export interface HookAnswer {
  status: number;
  body: { ok: boolean; runId?: string; sessionKey?: string; duplicate?: boolean; error?: { code: string } };
  ms: number;
}

/** POSTs one hook turn into chat `chat`'s session, delivering its reply there; the answer and how long it took. */
export async function postHook(
  port: number,
  chat: number,
  message: string,
  idempotencyKey?: string,
  headers: Record<string, string> = {},
): Promise<HookAnswer> {
  const body = JSON.stringify({ message, sessionKey: `hook:chat-${chat}`, to: `telegram:${chat}`, idempotencyKey });
  const sent = { authorization: `Bearer ${HOOK_TOKEN}`, "content-type": "application/json", ...headers };
  const began = performance.now();
  const answer = await rawRequest(port, { method: "POST", path: "/hooks/agent", headers: sent, body });
  return { status: answer.status, body: answer.body as HookAnswer["body"], ms: performance.now() - began };
}

/** The run id each handled hook's inbox entry ran under, by idempotency key. */
export async function inboxRunIds(cluster: Cluster): Promise<Map<string, unknown>> {
  const rows = await cluster.rows("inbox");
  return new Map(rows.filter((r) => r.key.startsWith("hook:")).map((r) => [r.key.slice(5), r.value.runId]));
}

/** Every reply once, in order, in its chat, once the gateway that answers is idle. */
export async function expectAnsweredOnce(fake: FakeTelegramServer, traffic: ChatTraffic, answering: ClusterGateway) {
  await until(() => chatsAnswered(fake, traffic), 60_000);
  // No update was pushed (nothing to confirm): the answering gateway idle, every reply is out.
  await answering.idle();
  expect(chatsOutcome(fake, traffic)).toEqual({ missing: [], repeated: [], outOfOrder: [], misrouted: [] });
}

/** Declares the file's PostgreSQL, cluster and fake Bot APIs (closed after each test). */
export function useHandoffCluster() {
  const db = usePostgres();
  const startCluster = useCluster(db);
  const fakes: FakeTelegramServer[] = [];
  afterEach(async () => {
    for (const fake of fakes.splice(0)) await fake.close();
  });
  const startFake = async () => {
    const fake = await startFakeTelegramServer();
    fakes.push(fake);
    return fake;
  };
  /** Two gateways with webhooks into any session and the fake's bot; `config` over the defaults. */
  async function twoGateways(cluster: ClusterOptions["cluster"], logLevel = "warn", config = {}) {
    const fake = await startFake();
    const started = await startCluster({
      size: 2,
      cluster,
      env: { SB_API_ROOT: fake.apiRoot, SB_HOOK_TOKEN: HOOK_TOKEN, SB_LOG_LEVEL: logLevel },
      config: {
        hooks: { allowRequestSessionKey: true },
        session: { queue: { cap: 1000, debounceMs: 0 } },
        ...config,
      },
    });
    const owner = await started.owner();
    const standby = started.gateways.find((g) => g !== owner)!;
    return { fake, cluster: started, owner, standby };
  }
  return { startCluster, startFake, twoGateways };
}
