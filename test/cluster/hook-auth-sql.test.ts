// The hooks' lockout kept in PostgreSQL (src/cluster/hook-auth-sql.ts, migration 0007): the same
// numbers as the in-memory limiter, step by step on one clock, and one count for every gateway of
// the schema, concurrent failures included.
import { afterEach, describe, expect, it } from "vitest";
import { postgresHookAuthLimiter } from "../../src/cluster/hook-auth-sql.js";
import { type AuthLimiterDeps, type HookAuthLimiter, memoryHookAuthLimiter } from "../../src/hooks/hook-auth.js";
import { createMemoryLogger } from "../../src/logger.js";
import { openPostgresDatabase } from "../../src/state/postgres/database.js";
import { createManualClock } from "../fakes/manual-clock.js";
import { freshSchema, usePostgres } from "../support/postgres.js";

const db = usePostgres();
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function schemaPool() {
  const database = await openPostgresDatabase({ url: db.url, schema: freshSchema(), logger: createMemoryLogger() });
  closers.push(() => database.close());
  return database.pool;
}

/** One step of a script: a failure, a success, or the wait read; the clock advanced first. */
type Step = [advanceMs: number, action: "fail" | "succeed" | "wait", client: string];

/** Runs `script` on `limiter`, returning the wait read at each "wait" step. */
async function play(limiter: HookAuthLimiter, clock: { advance(ms: number): void }, script: Step[]) {
  const waits: number[] = [];
  for (const [advanceMs, action, client] of script) {
    clock.advance(advanceMs);
    if (action === "fail") await limiter.fail(client);
    else if (action === "succeed") await limiter.succeed(client);
    else waits.push(await limiter.retryAfterSeconds(client));
  }
  return waits;
}

const fails = (n: number, client = "10.0.0.1", advanceMs = 0): Step[] =>
  Array.from({ length: n }, () => [advanceMs, "fail", client]);

const SCRIPTS: Array<[string, Omit<AuthLimiterDeps, "now">, Step[]]> = [
  [
    "5 failures lock a client until its minute is over; others are free",
    {},
    [
      ...fails(4),
      [0, "wait", "10.0.0.1"],
      [20_000, "fail", "10.0.0.1"],
      [0, "wait", "10.0.0.1"],
      [0, "wait", "10.0.0.2"],
      [39_500, "wait", "10.0.0.1"],
      [500, "wait", "10.0.0.1"],
    ],
  ],
  [
    "a success forgets the failures",
    {},
    [
      ...fails(4),
      [0, "succeed", "10.0.0.1"],
      ...fails(4),
      [0, "wait", "10.0.0.1"],
      ...fails(1),
      [0, "wait", "10.0.0.1"],
    ],
  ],
  [
    "a window that ended starts again",
    {},
    [
      ...fails(4),
      [60_000, "fail", "10.0.0.1"],
      ...fails(3),
      [0, "wait", "10.0.0.1"],
      [0, "fail", "10.0.0.1"],
      [0, "wait", "10.0.0.1"],
    ],
  ],
  [
    "lockoutMs counts from the failure that crossed the limit",
    { maxFailures: 10, lockoutMs: 300_000 },
    [
      ...fails(9),
      [0, "wait", "10.0.0.1"],
      [30_000, "fail", "10.0.0.1"],
      [0, "wait", "10.0.0.1"],
      [299_000, "wait", "10.0.0.1"],
      [1_000, "wait", "10.0.0.1"],
    ],
  ],
];

describe("the hooks' lockout in PostgreSQL", () => {
  it.each(SCRIPTS)("answers as the in-memory limiter does: %s", async (_name, options, script) => {
    const pool = await schemaPool();
    const memoryClock = createManualClock();
    const sqlClock = createManualClock();
    const expected = await play(memoryHookAuthLimiter({ ...options, now: memoryClock.now }), memoryClock, script);
    const got = await play(
      postgresHookAuthLimiter(() => pool, { ...options, now: sqlClock.now }),
      sqlClock,
      script,
    );
    expect(got).toEqual(expected);
    expect(expected.some((wait) => wait > 0)).toBe(true);
  });

  it("is one count for every gateway of the schema, concurrent failures on two gateways included", async () => {
    const pool = await schemaPool();
    const clock = createManualClock();
    const [gatewayA, gatewayB] = [0, 1].map(() => postgresHookAuthLimiter(() => pool, { now: clock.now }));
    await Promise.all([
      ...fails(2).map(() => gatewayA!.fail("203.0.113.9")),
      ...fails(3).map(() => gatewayB!.fail("203.0.113.9")),
    ]);
    expect([
      await gatewayA!.retryAfterSeconds("203.0.113.9"),
      await gatewayB!.retryAfterSeconds("203.0.113.9"),
    ]).toEqual([60, 60]);
    // A row whose window ended is deleted at the next failure: a spray of addresses does not pile up.
    clock.advance(60_000);
    await gatewayB!.fail("198.51.100.1");
    const { rows } = await pool.query("SELECT client FROM hook_auth_failures");
    expect(rows).toEqual([{ client: "198.51.100.1" }]);
  });

  it("rejects every call while the gateway has not joined its schema (the handler answers 503)", async () => {
    const limiter = postgresHookAuthLimiter(() => undefined, { now: () => 0 });
    await expect(limiter.retryAfterSeconds("a")).rejects.toThrow(/not joined/);
    await expect(limiter.fail("a")).rejects.toThrow(/not joined/);
  });
});
