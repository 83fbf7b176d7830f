// The relay a standby serves through (src/gateway/owner-relay.ts), pointed at a REAL owner: a
// gateway process on PostgreSQL (test/fakes/platform-gateway-process.ts), the relay in this test's
// process on a port of its own. What a client of the relay sees must be what the owner answers,
// and the owner must count each client as itself, not as the standby.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { connectGateway } from "../../src/cli/gateway-client.js";
import { createOwnerRelay } from "../../src/gateway/owner-relay.js";
import type { OwnerAddress, StandbyContext, StandbyFront } from "../../src/gateway/standby-front.js";
import { createTokenGuard } from "../../src/gateway/token-guard.js";
import { readRelaySecret } from "../../src/cluster/relay-secret.js";
import { createMemoryLogger } from "../../src/logger.js";
import { openPostgresPool } from "../../src/state/postgres/pool.js";
import { type FakeTelegramServer, startFakeTelegramServer } from "../fakes/fake-telegram-server.js";
import { type GatewayChild, killHard, useGatewayChildren } from "../support/gateway-child.js";
import { freshSchema, usePostgres } from "../support/postgres.js";
import { rawRequest, rawSocket, req } from "../support/raw-gateway.js";
import { nextEvent, tempHome } from "../support/test-gateway.js";

const db = usePostgres();
const start = useGatewayChildren();
const TOKEN = "gateway-token-0123456789";
const HOOK_TOKEN = "hook-token-0123456789";

interface Setup {
  owner: GatewayChild;
  /** the relay's port: what a standby would listen on */
  port: number;
  relay: StandbyFront;
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
let fake: FakeTelegramServer;
beforeEach(async () => {
  fake = await startFakeTelegramServer();
  cleanups.push(() => fake.close());
});

/**
 * What a standby gives its front, read from the schema as a standby reads it; its edge trusts this
 * test as a proxy, so each request names its client in x-forwarded-for.
 */
function standbyContext(pool: pg.Pool): StandbyContext {
  const readOwner = async () => {
    const { rows } = await pool.query<OwnerAddress>(
      `SELECT m.node_id AS "nodeId", m.address FROM cluster_leases l JOIN cluster_members m ON m.incarnation = l.owner
       WHERE l.name = 'schema:writer'`,
    );
    return rows[0];
  };
  let owner: OwnerAddress | undefined;
  return {
    owner: () => owner,
    refreshOwner: async () => (owner = await readOwner()),
    relaySecret: () => readRelaySecret(pool),
    timing: { leaseTtlMs: 60_000, heartbeatMs: 20_000 },
    edge: {
      // Unlike the owner's config, the standby's allows one page: what that page sends, the owner trusts.
      policy: { token: TOKEN, allowedOrigins: ["https://ui.example"], allowedHosts: [] },
      guard: createTokenGuard({ token: TOKEN, trustedProxies: ["127.0.0.1"], now: Date.now }),
    },
    logger: createMemoryLogger(),
  };
}

/** The owner gateway on a fresh schema, and a relay to it serving on its own port. */
async function ownerAndRelay(): Promise<Setup> {
  const schema = freshSchema();
  const owner = await start("platform-gateway-process.ts", {
    SB_HOME: await tempHome(),
    SB_API_ROOT: fake.apiRoot,
    SB_STATE: JSON.stringify({ backend: "postgres", postgres: { url: db.url, schema, poolSize: 4 } }),
    SB_HOOK_TOKEN: HOOK_TOKEN,
    SB_CONFIG: JSON.stringify({ gateway: { auth: { token: TOKEN } } }),
  });
  const pool: pg.Pool = openPostgresPool({ url: db.url, schema, poolSize: 2, logger: createMemoryLogger() });
  cleanups.push(() => pool.end());
  const relay = createOwnerRelay(standbyContext(pool));
  const server = http.createServer((request, response) => void relay.handleHttp(request, response));
  server.on("upgrade", (request, socket, head) => relay.handleUpgrade(request, socket, head));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    await relay.close();
    await new Promise((resolve) => server.close(resolve));
  });
  return { owner, port: (server.address() as AddressInfo).port, relay };
}

/** `POST /tools/invoke` through the relay from `client` with `token`. */
function invoke(port: number, client: string, token: string) {
  return rawRequest(port, {
    method: "POST",
    path: "/tools/invoke",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}`, "x-forwarded-for": client },
    body: JSON.stringify({ tool: "sessions_list", args: {} }),
  });
}

describe("createOwnerRelay with a real owner gateway", () => {
  it("relays a webhook: the owner stores it and answers 202, and its turn runs", async () => {
    const { port } = await ownerAndRelay();
    const hook = await rawRequest(port, {
      method: "POST",
      path: "/hooks/agent?source=relay-test",
      headers: { "content-type": "application/json", authorization: `Bearer ${HOOK_TOKEN}` },
      body: JSON.stringify({ message: "nightly report", deliver: false, idempotencyKey: "night-1" }),
    });
    expect(hook.status).toBe(202);
    expect(hook.body).toMatchObject({ ok: true, runId: expect.any(String) });
    const client = await connectGateway(`ws://127.0.0.1:${port}`, TOKEN);
    try {
      const waited = await client.call<{ status: string }>("agent.wait", { runId: hook.body.runId, timeoutMs: 15_000 });
      expect(waited.status).toBe("ok");
      // Stored once: the same key again runs nothing and answers with the first run.
      const again = await rawRequest(port, {
        method: "POST",
        path: "/hooks/agent",
        headers: { "content-type": "application/json", authorization: `Bearer ${HOOK_TOKEN}` },
        body: JSON.stringify({ message: "nightly report", deliver: false, idempotencyKey: "night-1" }),
      });
      expect(again.body).toMatchObject({ runId: hook.body.runId, duplicate: true });
    } finally {
      await client.close();
    }
  }, 60_000);

  it("answers a wrong token 401 and locks out the client that guessed, not the other clients of the standby", async () => {
    const { port } = await ownerAndRelay();
    const [guesser, other] = ["203.0.113.7", "203.0.113.8"];
    for (let i = 0; i < 10; i++) expect((await invoke(port, guesser, "wrong")).status).toBe(401);
    const locked = await invoke(port, guesser, TOKEN);
    expect(locked.status).toBe(429);
    expect(locked.body).toMatchObject({ ok: false, error: { code: "RATE_LIMITED" } });
    expect(Number(locked.headers["retry-after"])).toBeGreaterThan(0);
    // Its WebSocket upgrade too: the owner's refusal reaches it as the owner wrote it.
    await expect(rawSocket(port, { "x-forwarded-for": guesser })).rejects.toMatchObject({
      status: 429,
      body: { ok: false, error: { code: "RATE_LIMITED" } },
    });
    expect((await invoke(port, other, "wrong")).status).toBe(401);
    const allowed = await invoke(port, other, TOKEN);
    expect(allowed.status).toBe(200);
    expect(allowed.body).toMatchObject({ ok: true });
  }, 60_000);

  it("keeps the owner's checks: its body limit answers 413 through the relay; the standby checks Origin; a forged relay header sent straight to the owner trusts nothing", async () => {
    const { owner, port } = await ownerAndRelay();
    const big = await rawRequest(port, {
      method: "POST",
      path: "/tools/invoke",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ tool: "sessions_list", args: { pad: "x".repeat(2 * 1024 * 1024) } }),
    });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ ok: false, error: { code: "INVALID_REQUEST" } });
    // A browser's Origin is the standby's to check: a foreign page is refused there, an allowed one
    // (allowed by the standby's policy only) is trusted by the owner.
    const fromPage = (origin: string) =>
      rawRequest(port, {
        method: "POST",
        path: "/tools/invoke",
        headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}`, origin },
        body: JSON.stringify({ tool: "sessions_list", args: {} }),
      });
    const foreign = await fromPage("https://evil.example");
    expect(foreign.status).toBe(403);
    expect(foreign.body).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });
    expect((await fromPage("https://ui.example")).status).toBe(200);
    // Straight to the owner with a wrong secret: an ordinary request, its Origin checked.
    const forged = await rawRequest(Number(new URL(owner.url).port), {
      method: "POST",
      path: "/tools/invoke",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${TOKEN}`,
        origin: "https://ui.example",
        "x-switchboard-relay": "0".repeat(64),
        "x-forwarded-for": "203.0.113.9",
      },
      body: JSON.stringify({ tool: "sessions_list", args: {} }),
    });
    expect(forged.status).toBe(403);
    expect(forged.body).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });
  }, 60_000);

  it("pipes a WebSocket client both ways: connect, sessions.list, subscribe, chat.send and the turn's events", async () => {
    const { port, relay } = await ownerAndRelay();
    const client = await connectGateway(`ws://127.0.0.1:${port}`, TOKEN);
    try {
      const listed = await client.call<{ sessions: unknown[] }>("sessions.list", {});
      expect(Array.isArray(listed.sessions)).toBe(true);
      await client.call("subscribe", { sessionKeys: ["main"] });
      const reply = nextEvent<{ text: string; kind: string }>(client, "chat.delivery", (p) => p.kind === "reply");
      const final = nextEvent<{ state: string }>(client, "chat", (p) => p.state === "final");
      const sent = await client.call<{ status: string; sessionKey: string }>("chat.send", { message: "via the relay" });
      expect(sent).toMatchObject({ status: "started", sessionKey: "agent:main:main" });
      expect((await reply).text).toBe("Echo: via the relay");
      expect((await final).state).toBe("final");
      const after = await client.call<{ sessions: Array<{ key: string }> }>("sessions.list", {});
      expect(after.sessions.map((s) => s.key)).toContain("agent:main:main");
      // The standby becoming the owner closes what it relays with 1012, so clients reconnect.
      const closed = new Promise<void>((resolve) => client.onClose(resolve));
      const raw = await rawSocket(port);
      await relay.close();
      expect(await raw.closed).toEqual({ code: 1012 });
      await closed;
    } finally {
      await client.close();
    }
  }, 60_000);

  it("closes a relayed WebSocket with 1012 when the owner is SIGKILLed, and answers HTTP 503 UNAVAILABLE", async () => {
    const { owner, port } = await ownerAndRelay();
    const socket = new WebSocket(`ws://127.0.0.1:${port}`);
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
    const answered = new Promise<unknown>((resolve) =>
      socket.once("message", (data) => resolve(JSON.parse(String(data)))),
    );
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    socket.send(req("1", "connect", { auth: { token: TOKEN } }));
    expect(await answered).toMatchObject({ id: "1", ok: true });
    await killHard(owner);
    expect(await closed).toBe(1012);
    const answer = await rawRequest(port, { method: "POST", path: "/tools/invoke", body: "{}" });
    expect(answer.status).toBe(503);
    expect(answer.headers["retry-after"]).toBe("1");
    expect(answer.body).toMatchObject({ ok: false, error: { code: "UNAVAILABLE" } });
    // A new WebSocket is told to come back later.
    const late = new WebSocket(`ws://127.0.0.1:${port}`);
    expect(await new Promise((resolve) => late.once("close", resolve))).toBe(1013);
  }, 60_000);
});
