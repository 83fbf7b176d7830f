// The hooks' lockout kept in PostgreSQL (src/cluster/hook-auth-sql.ts, migration 0007): the same
// numbers as the in-memory limiter, step by step; each attempt counted and answered in one statement,
// so concurrent guesses through several gateways get at most 5 answers that tell anything; one count on the server's
// clock whatever the gateways' clocks say; expired rows pruned in bounded batches.
import { afterEach, describe, expect, it, vi } from "vitest";
import { postgresHookAuthLimiter } from "../../src/cluster/hook-auth-sql.js";
import { type AuthLimiterDeps, type HookAuthLimiter, memoryHookAuthLimiter } from "../../src/hooks/hook-auth.js";
import { createMemoryLogger } from "../../src/logger.js";
import { openPostgresDatabase } from "../../src/state/postgres/database.js";
import { createManualClock } from "../fakes/manual-clock.js";
import { freshSchema, usePostgres } from "../support/postgres.js";

const db = usePostgres();
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const close of closers.splice(0).reverse()) await close();
});

/** A gateway's pool on `schema` (a fresh one unless named: two calls with one name are two gateways of it). */
async function schemaPool(schema = freshSchema()) {
  const database = await openPostgresDatabase({ url: db.url, schema, logger: createMemoryLogger() });
  closers.push(() => database.close());
  return database.pool;
}

/** One step of a script: an attempt with a wrong or a right token (its wait recorded: 0 is an answer, more is 429); the clock advanced first. */
type Step = [advanceMs: number, token: "wrong" | "right", client: string];

/** Runs `script` on `limiter`, returning each attempt's wait. */
async function play(limiter: HookAuthLimiter, clock: { advance(ms: number): void }, script: Step[]) {
  const waits: number[] = [];
  for (const [advanceMs, token, client] of script) {
    clock.advance(advanceMs);
    waits.push(await limiter.attempt(client, token === "right"));
  }
  return waits;
}

const attempts = (n: number, client = "10.0.0.1"): Step[] => Array.from({ length: n }, () => [0, "wrong", client]);

const SCRIPTS: Array<[string, Omit<AuthLimiterDeps, "now">, Step[]]> = [
  [
    "5 wrong tokens lock a client until its minute is over, even with the right token; others are free",
    {},
    [
      ...attempts(4),
      [20_000, "wrong", "10.0.0.1"],
      [0, "wrong", "10.0.0.1"],
      [0, "right", "10.0.0.1"],
      [0, "right", "10.0.0.2"],
      [39_500, "wrong", "10.0.0.1"],
      [500, "wrong", "10.0.0.1"],
    ],
  ],
  ["a right token forgets the wrong ones", {}, [...attempts(4), [0, "right", "10.0.0.1"], ...attempts(6)]],
  ["a window that ended starts again", {}, [...attempts(4), [60_000, "wrong", "10.0.0.1"], ...attempts(5)]],
  [
    "lockoutMs counts from the attempt that reached the limit",
    { maxFailures: 10, lockoutMs: 300_000 },
    [
      ...attempts(9),
      [30_000, "wrong", "10.0.0.1"],
      [0, "wrong", "10.0.0.1"],
      [299_000, "wrong", "10.0.0.1"],
      [1_000, "wrong", "10.0.0.1"],
    ],
  ],
];

describe("the hooks' lockout in PostgreSQL", () => {
  it.each(SCRIPTS)("answers as the in-memory limiter does: %s", async (_name, options, script) => {
    const pool = await schemaPool();
    const memoryClock = createManualClock();
    const expected = await play(memoryHookAuthLimiter({ ...options, now: memoryClock.now }), memoryClock, script);
    let offset = 0;
    const sqlClock = {
      advance: (ms: number) => {
        offset += ms;
      },
    };
    const got = await play(
      postgresHookAuthLimiter(() => pool, { ...options, offsetMs: () => offset }),
      sqlClock,
      script,
    );
    expect(got).toEqual(expected);
    expect(expected.some((wait) => wait > 0)).toBe(true);
  });

  it("counts and answers each attempt in one step: of 50 concurrent wrong tokens through two gateways, 5 are answered 401", async () => {
    const schema = freshSchema();
    const [poolA, poolB] = [await schemaPool(schema), await schemaPool(schema)];
    // No gateway-side queue, so all 50 reach the database at once (as many as the pools allow).
    const [gatewayA, gatewayB] = [poolA, poolB].map((pool) =>
      postgresHookAuthLimiter(() => pool, { maxConcurrent: 50 }),
    );
    const waits = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 ? gatewayA! : gatewayB!).attempt("203.0.113.9", false)),
    );
    expect(waits.filter((wait) => wait === 0)).toHaveLength(5);
    expect(waits.filter((wait) => wait > 55 && wait <= 60)).toHaveLength(45);
    // The right token is refused too until the minute is over, on either gateway.
    expect(await gatewayA!.attempt("203.0.113.9", true)).toBeGreaterThan(55);
    expect(await gatewayB!.attempt("203.0.113.9", true)).toBeGreaterThan(55);
  });

  it("refuses none of 50 concurrent right tokens of one client through two gateways (a burst of hooks)", async () => {
    const schema = freshSchema();
    const [poolA, poolB] = [await schemaPool(schema), await schemaPool(schema)];
    const [gatewayA, gatewayB] = [poolA, poolB].map((pool) =>
      postgresHookAuthLimiter(() => pool, { maxConcurrent: 50 }),
    );
    await gatewayA!.attempt("203.0.113.9", false);
    const waits = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 ? gatewayA! : gatewayB!).attempt("203.0.113.9", true)),
    );
    expect(waits.filter((wait) => wait > 0)).toEqual([]);
  });

  it("answers 5 of 200 concurrent wrong tokens through one gateway (review 2's reproduction)", async () => {
    const pool = await schemaPool();
    const limiter = postgresHookAuthLimiter(() => pool);
    const waits = await Promise.all(Array.from({ length: 200 }, () => limiter.attempt("203.0.113.9", false)));
    expect(waits.filter((wait) => wait === 0)).toHaveLength(5);
    expect(await limiter.attempt("203.0.113.9", false)).toBeGreaterThan(0);
  });

  it("keeps one lockout on the server's clock: a gateway whose clock is 2 minutes ahead neither frees nor misses it", async () => {
    const schema = freshSchema();
    const [gatewayA, gatewayB] = [await schemaPool(schema), await schemaPool(schema)].map((pool) =>
      postgresHookAuthLimiter(() => pool, { pruneEveryMs: 0 }),
    );
    const lockedOnA = [];
    for (let i = 0; i < 6; i++) lockedOnA.push(await gatewayA!.attempt("203.0.113.10", false));
    expect(lockedOnA.map((wait) => wait > 0)).toEqual([false, false, false, false, false, true]);
    // Now gateway B's moment, its clock 2 minutes ahead: another client's attempt runs the prune there.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 120_000 });
    expect(await gatewayB!.attempt("203.0.113.11", false)).toBe(0);
    expect(await gatewayB!.attempt("203.0.113.10", false)).toBeGreaterThan(55);
    vi.useRealTimers();
    expect(await gatewayA!.attempt("203.0.113.10", false)).toBeGreaterThan(55);
  });

  it("prunes rows whose window is over in bounded batches, keeping the live ones", async () => {
    const pool = await schemaPool();
    let offset = 0;
    const limiter = postgresHookAuthLimiter(() => pool, { offsetMs: () => offset, pruneEveryMs: 0 });
    // A spray of 1 500 addresses, each tried once a minute ago.
    await pool.query(
      `INSERT INTO hook_auth_failures (client, failures, since_ms, expires_ms)
       SELECT '198.51.100.' || i, 1, 0, 1 FROM generate_series(1, 1500) i`,
    );
    await limiter.attempt("203.0.113.9", false);
    const count = async () => Number((await pool.query("SELECT count(*) AS n FROM hook_auth_failures")).rows[0].n);
    expect(await count()).toBe(501);
    offset = 30_000;
    await limiter.attempt("203.0.113.8", false);
    expect(await count()).toBe(2);
    offset = 61_000;
    await limiter.attempt("203.0.113.7", false);
    const { rows } = await pool.query("SELECT client FROM hook_auth_failures ORDER BY client");
    expect(rows).toEqual([{ client: "203.0.113.7" }, { client: "203.0.113.8" }]);
  });

  it("rejects every call while the gateway has not joined its schema (the handler answers 503)", async () => {
    const limiter = postgresHookAuthLimiter(() => undefined);
    await expect(limiter.attempt("a", false)).rejects.toThrow(/not joined/);
    await expect(limiter.attempt("a", true)).rejects.toThrow(/not joined/);
  });
});
