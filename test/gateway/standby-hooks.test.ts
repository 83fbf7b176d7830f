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
import { storedRunId } from "../../src/agents/uuid-v5.js";
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

/** Models the fake knows: any ref but `nope/*`, refused as the owner's resolver refuses an unknown one. */
function resolveModel(ref: string) {
  if (ref.startsWith("nope/")) throw new Error(`unknown model "${ref}"`);
  return { model: createOfflineModel(), ref, offline: true };
}

/** A standby whose hooks store into `joined` (undefined: not joined yet), with the default front (503) behind them. */
async function standbyStoringIn(
  joined: { pool: pg.Pool; schema: string } | undefined,
  configOf = config,
  gatewayToken?: string,
) {
  const logger = createMemoryLogger();
  const server: http.Server = await openHttpServer("127.0.0.1", 0, { maxConnections: 64, logger });
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  const front = withStandbyHooks(createStandbyFront, {
    config: configOf,
    resolveModel,
    target: { joined: () => joined, nodeId: "gw-standby" },
    logger,
  });
  serveStandby(server, {
    logger,
    readOwner: async () => ({ nodeId: "gw-owner", address: "127.0.0.1:9" }),
    relaySecret: async () => "s3cret",
    policy: { token: gatewayToken, allowedOrigins: [], allowedHosts: [] },
    guard: createTokenGuard({ token: gatewayToken, trustedProxies: [], now: Date.now }),
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
    // The run id its key derives: the owner, given the same key, names the same run.
    expect(accepted.body.runId).toBe(storedRunId("hook", "switchboard", "hook:deploy-7"));
    const again = await post(port, { message: "deploy done", idempotencyKey: "deploy-7" });
    expect(again.body).toEqual({ ...accepted.body, duplicate: true });
    const { rows } = await database.pool.query("SELECT kind, dedupe_key, run_id, received_by FROM inbound_handoff");
    expect(rows).toEqual([
      { kind: "hook", dedupe_key: "hook:deploy-7", run_id: accepted.body.runId, received_by: "gw-standby" },
    ]);
    // Without a key: a new run id each time, stored under `hook-run:<runId>`.
    const keyless = [await post(port, { message: "no key" }), await post(port, { message: "no key" })];
    expect(new Set(keyless.map((a) => a.body.runId)).size).toBe(2);
    const stored = await database.pool.query(
      "SELECT dedupe_key FROM inbound_handoff WHERE dedupe_key LIKE 'hook-run:%'",
    );
    expect(stored.rows.map((r) => r.dedupe_key).sort()).toEqual(keyless.map((a) => `hook-run:${a.body.runId}`).sort());
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

/** A fresh schema's database, closed after the test. */
async function freshDatabase() {
  const database = await openPostgresDatabase({ url: db.url, schema: freshSchema(), logger: createMemoryLogger() });
  closers.push(() => database.close());
  return database;
}

const handedOff = async (pool: pg.Pool) => (await pool.query("SELECT dedupe_key FROM inbound_handoff")).rows;

describe("a standby's hooks refuse as the owner's do (docs/scale-out.md: the same checks)", () => {
  it("refuses a foreign Origin (403), a body over hooks.maxBodyBytes (413), a session key, target or model it does not allow (400), storing nothing", async () => {
    const database = await freshDatabase();
    const small = parseConfig({ hooks: { enabled: true, token: TOKEN, maxBodyBytes: 1_024 } }).config;
    const port = await standbyStoringIn({ pool: database.pool, schema: database.schema }, small);
    const foreign = await post(port, { message: "x" }, { origin: "https://evil.example" });
    const tooBig = await post(port, { message: "x".repeat(2_000) });
    expect([foreign.status, foreign.body.error.code, tooBig.status]).toEqual([403, "FORBIDDEN", 413]);
    const refusals = [];
    for (const [body, field] of [
      [{ message: "x", sessionKey: "hook:ci-main" }, "sessionKey"],
      [{ message: "x", to: "nowhere" }, "to"],
      [{ message: "x", model: "nope/none" }, "model"],
    ] as const) {
      const answer = await post(port, body);
      refusals.push([answer.status, answer.body.error.field]);
      expect(refusals.at(-1)).toEqual([400, field]);
    }
    expect(await handedOff(database.pool)).toEqual([]);
  });

  it("refuses a DNS-rebound page (no gateway token) for its browser marks before the token counts, and serves a server whose proxy keeps the public Host", async () => {
    const database = await freshDatabase();
    const port = await standbyStoringIn({ pool: database.pool, schema: database.schema });
    const page = { host: `rebind.evil.example:${port}`, origin: `http://rebind.evil.example:${port}` };
    const rebound = [];
    for (let i = 0; i < 6; i++) {
      const answer = await post(port, { message: "x" }, { authorization: "", ...page });
      rebound.push(`${answer.status} ${answer.body.error.code}`);
    }
    expect(rebound).toEqual(Array(6).fill("403 FORBIDDEN"));
    // No Host check on hooks: a reverse proxy that keeps the public name (Caddy's default) is served.
    const real = await post(
      port,
      { message: "deploy done", idempotencyKey: "rebound-1" },
      { host: "hooks.example.com" },
    );
    expect(real.status).toBe(202);
  });

  it("refuses any browser request (gateway token set) with 403 before the token counts, so the real caller still gets 202", async () => {
    const database = await freshDatabase();
    const port = await standbyStoringIn({ pool: database.pool, schema: database.schema }, config, "gateway-token-0123");
    // A DNS-rebound page is same-origin to itself; the gateway's own page and a bare Sec-Fetch-Site are refused too.
    const rebound = { host: `rebind.evil.example:${port}`, origin: `http://rebind.evil.example:${port}` };
    const marks: Array<Record<string, string>> = [
      rebound,
      rebound,
      rebound,
      rebound,
      rebound,
      { origin: `http://127.0.0.1:${port}` },
      { "sec-fetch-site": "same-origin" },
    ];
    const refused = [];
    for (const headers of marks) {
      const answer = await post(port, { message: "x" }, { authorization: "", ...headers });
      refused.push(`${answer.status} ${answer.body.error.code}`);
    }
    expect(refused).toEqual(Array(7).fill("403 FORBIDDEN"));
    // The real caller is a server; Node's own fetch sends `sec-fetch-mode: cors`, which is no browser mark.
    const real = await post(
      port,
      { message: "deploy done", idempotencyKey: "browser-1" },
      { "sec-fetch-mode": "cors" },
    );
    expect(real.status).toBe(202);
    expect(await handedOff(database.pool)).toEqual([{ dedupe_key: "hook:browser-1" }]);
  });

  it("keeps one lockout for the schema: 5 wrong tokens on one standby and the right token is refused 429 on another", async () => {
    const database = await freshDatabase();
    const joined = { pool: database.pool, schema: database.schema };
    const [first, second] = [await standbyStoringIn(joined), await standbyStoringIn(joined)];
    const wrong = [];
    for (let i = 0; i < 5; i++)
      wrong.push((await post(first!, { message: "x" }, { authorization: "Bearer no" })).status);
    expect(wrong).toEqual([401, 401, 401, 401, 401]);
    const locked = await post(second!, { message: "deploy done", idempotencyKey: "locked-1" });
    expect([locked.status, locked.body.error.code]).toEqual([429, "RATE_LIMITED"]);
    expect(Number(locked.headers["retry-after"])).toBeGreaterThan(50);
    expect(await handedOff(database.pool)).toEqual([]);
  });
});

describe("a standby's repeat of a key the owner took in", () => {
  /** Writes the owner's inbox row of `key` as its inbox does once a turn ran (`at`: when). */
  const ownerRan = (pool: pg.Pool, key: string, runId: string, at: number) =>
    pool.query("INSERT INTO state_rows (tbl, key, value) VALUES ('inbox', $1, $2)", [
      key,
      JSON.stringify({ status: "done", at, runId, sessionKey: "agent:main:hook:ran" }),
    ]);

  it("answers duplicate with the owner's run, stored nothing; a key past the inbox's 7-day memory is new again", async () => {
    const database = await freshDatabase();
    const port = await standbyStoringIn({ pool: database.pool, schema: database.schema });
    await ownerRan(database.pool, "hook:ran-1", "run-ran-1", Date.now() - 60_000);
    await ownerRan(database.pool, "hook:ran-old", "run-ran-old", Date.now() - 8 * 24 * 3_600_000);
    const repeat = await post(port, { message: "again", idempotencyKey: "ran-1" });
    expect(repeat.body).toEqual({ ok: true, runId: "run-ran-1", sessionKey: "agent:main:hook:ran", duplicate: true });
    const forgotten = await post(port, { message: "again", idempotencyKey: "ran-old" });
    expect([forgotten.status, forgotten.body.duplicate]).toEqual([202, undefined]);
    expect(await handedOff(database.pool)).toEqual([{ dedupe_key: "hook:ran-old" }]);
  });
});
