// The state's pool (src/state/postgres/pool.ts) promises that an idle connection the server ends
// (pg_terminate_backend, a restart) is logged and replaced, never an uncaught error: a pool without
// an "error" listener throws the server's FATAL 57P01 out of the socket's data handler, which
// would crash the gateway (a whole-suite run saw it from a test's own pool).
import pg from "pg";
import { describe, expect, it, onTestFinished } from "vitest";
import { createMemoryLogger } from "../../../src/logger.js";
import { openPostgresPool } from "../../../src/state/postgres/pool.js";
import { freshSchema, usePostgres } from "../../support/postgres.js";

const db = usePostgres();
const BROKE = "an idle PostgreSQL connection broke";

describe("the state's PostgreSQL pool", () => {
  it("logs and replaces idle connections the server terminates, with no uncaught error", async () => {
    const uncaught: unknown[] = [];
    const record = (err: unknown) => uncaught.push(err);
    process.prependListener("uncaughtException", record);
    const logger = createMemoryLogger();
    const applicationName = freshSchema("pool");
    const pool = openPostgresPool({ url: db.url, schema: freshSchema(), logger, applicationName });
    const admin = new pg.Client({ connectionString: db.url });
    onTestFinished(async () => {
      process.removeListener("uncaughtException", record);
      await pool.end();
      await admin.end();
    });
    // Two connections, both idle in the pool afterwards.
    await Promise.all([pool.query("SELECT pg_sleep(0.05)"), pool.query("SELECT pg_sleep(0.05)")]);
    expect(pool.idleCount).toBe(2);

    await admin.connect();
    const { rowCount } = await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
      [applicationName],
    );
    expect(rowCount).toBe(2);
    await expect.poll(() => logger.records.filter((r) => r.message === BROKE).length, { timeout: 10_000 }).toBe(2);
    expect(pool.totalCount).toBe(0);
    expect((await pool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    expect(uncaught).toEqual([]);
  });
});
