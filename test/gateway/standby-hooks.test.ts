// A standby serves the hooks itself (src/gateway/standby-hooks.ts): the owner's checks from the same
// config refuse a bad request before anything is stored, an accepted one is stored in the hand-off
// inbox of the real PostgreSQL schema and answered 202 with the run id it promises, the database away
// is a 503 with nothing stored, and every other request goes to the front it wraps (the relay).
import type http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createOfflineModel } from "../../src/agents/models/index.js";
import { parseConfig } from "../../src/config/index.js";
import { createStandbyFront } from "../../src/gateway/standby-front.js";
import { withStandbyHooks } from "../../src/gateway/standby-hooks.js";
import { openHttpServer, serveStandby } from "../../src/gateway/standby-server.js";
import { createTokenGuard } from "../../src/gateway/token-guard.js";
import { createMemoryLogger } from "../../src/logger.js";
import { openPostgresDatabase } from "../../src/state/postgres/database.js";
import { freshSchema, usePostgres } from "../support/postgres.js";
import { rawRequest } from "../support/raw-gateway.js";

const db = usePostgres();
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const TOKEN = "standby-hook-token-0123456789";
const config = parseConfig({ hooks: { enabled: true, token: TOKEN } }).config;

/** A standby whose hooks store into `joined` (undefined: not joined yet), with the default front (503) behind them. */
async function standbyStoringIn(joined: { pool: pg.Pool; schema: string } | undefined) {
  const logger = createMemoryLogger();
  const server: http.Server = await openHttpServer("127.0.0.1", 0, { maxConnections: 64, logger });
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  const front = withStandbyHooks(createStandbyFront, {
    config,
    resolveModel: (ref) => ({ model: createOfflineModel(), ref, offline: true }),
    target: { joined: () => joined, nodeId: "gw-standby" },
    logger,
  });
  serveStandby(server, {
    logger,
    readOwner: async () => ({ nodeId: "gw-owner", address: "127.0.0.1:9" }),
    relaySecret: async () => "s3cret",
    policy: { token: undefined, allowedOrigins: [], allowedHosts: [] },
    guard: createTokenGuard({ token: undefined, trustedProxies: [], now: Date.now }),
    front,
    timing: { leaseTtlMs: 60_000, heartbeatMs: 20_000 },
  });
  return (server.address() as AddressInfo).port;
}

const post = (port: number, body: unknown, headers: Record<string, string> = {}) =>
  rawRequest(port, {
    method: "POST",
    path: "/hooks/agent",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

describe("a standby's hooks", () => {
  it("checks as the owner does, stores what passes for the owner and answers 202 with the run id it promises; other paths go to the front", async () => {
    const database = await openPostgresDatabase({ url: db.url, schema: freshSchema(), logger: createMemoryLogger() });
    closers.push(() => database.close());
    const port = await standbyStoringIn({ pool: database.pool, schema: database.schema });
    const wrongToken = await post(port, { message: "x" }, { authorization: "Bearer nope" });
    const noMessage = await post(port, { name: "ci" });
    const badAgent = await post(port, { message: "x", agentId: "nobody" });
    expect([wrongToken.status, noMessage.status, badAgent.status]).toEqual([401, 400, 404]);
    const accepted = await post(port, { message: "deploy done", idempotencyKey: "deploy-7" });
    expect([accepted.status, accepted.body]).toEqual([
      202,
      { ok: true, runId: expect.any(String), sessionKey: expect.stringMatching(/^agent:main:hook:/) },
    ]);
    const again = await post(port, { message: "deploy done", idempotencyKey: "deploy-7" });
    expect(again.body).toEqual({ ...accepted.body, duplicate: true });
    const { rows } = await database.pool.query("SELECT kind, dedupe_key, run_id, received_by FROM inbound_handoff");
    expect(rows).toEqual([
      { kind: "hook", dedupe_key: "hook:deploy-7", run_id: accepted.body.runId, received_by: "gw-standby" },
    ]);
    // Not a hook: the front behind (here the default 503 naming the owner; in a gateway the relay).
    const other = await rawRequest(port, { method: "POST", path: "/tools/invoke", body: "{}" });
    expect([other.status, other.body.error.code]).toEqual([503, "UNAVAILABLE"]);
  });

  it("answers 503 STORAGE_FAILED, nothing stored, while the database is away or the standby has not joined", async () => {
    // Nothing listens on port 9: the connection is refused at once.
    const away = new pg.Pool({
      connectionString: "postgres://postgres@127.0.0.1:9/postgres",
      connectionTimeoutMillis: 2_000,
    });
    away.on("error", () => {});
    closers.push(() => away.end());
    for (const joined of [{ pool: away, schema: "away" }, undefined]) {
      const port = await standbyStoringIn(joined);
      const refused = await post(port, { message: "deploy done", idempotencyKey: "deploy-8" });
      expect([refused.status, refused.body.error.code]).toEqual([503, "STORAGE_FAILED"]);
      expect(refused.body.error.message).toMatch(/nothing runs, send it again/);
    }
  });
});
