import path from "node:path";
import type pg from "pg";
import { afterAll } from "vitest";
import { runStateContract } from "../contracts/state-contract.js";
import { until } from "../support/gateway-child.js";
import { testPool, usePostgres } from "../support/postgres.js";
import { openState } from "./postgres/open-postgres-state.js";

// A real PostgreSQL server (skipped with the reason where none is installed; CI must run it).
const db = usePostgres();

let pool: pg.Pool | undefined;
afterAll(() => pool?.end());

/**
 * Waits until the server ended every backend of the killed writer (its connections' application_name):
 * until then a statement it sent before the SIGKILL may still commit, after the test began reading.
 */
async function writerBackendsGone(appName: string): Promise<void> {
  pool ??= testPool({ connectionString: db.url, max: 1 });
  const count = async () =>
    (await pool!.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1", [appName]))
      .rows[0].n as number;
  await until(async () => (await count()) === 0, 10_000);
}

runStateContract({
  name: "PostgreSQL",
  open: openState,
  crashChild: {
    opener: path.resolve(import.meta.dirname, "postgres/open-postgres-state.ts"),
    settled: writerBackendsGone,
  },
});
