// A commit torn by a kill, on PostgreSQL, at a known point: a process writing commits of three writes
// (a session patch, an inbox claim, an outbox item: test/fakes/state-writer.ts) through the state port
// is SIGKILLed while its batch (one statement: src/state/postgres/batch-sql.ts) has written part of a
// commit and waits on a row the test holds. The server notices the dead client
// (client_connection_check_interval) and rolls the statement back: none of that commit's writes is
// there, and the next process commits whole. (The random-time variant, 20 kills, is the state
// contract's "keeps each commit whole", run on every backend.)
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type pg from "pg";
import { describe, expect, it, onTestFinished } from "vitest";
import { commitSessionKey, openContractStores } from "../contracts/state-stores.js";
import { openState } from "../state/postgres/open-postgres-state.js";
import { compiledScript } from "../support/compiled-script.js";
import { until } from "../support/gateway-child.js";
import { testPool, usePrivatePostgres } from "../support/postgres.js";
import { PG_URL_ENV } from "../support/postgres-server.js";
import { runAndKill } from "../support/run-and-kill.js";

// A server of its own: it must notice a dead client within 100 ms even while that client's statement waits.
const server = usePrivatePostgres(["client_connection_check_interval=100ms"]);
const OPENER = path.resolve(import.meta.dirname, "../state/postgres/open-postgres-state.ts");
/**
 * The backends waiting for a lock `holder` has whose transaction has already written (it has an xid):
 * found by what blocks them, not by their query text, which pg_stat_activity cuts at 1 kB.
 */
async function writersBlockedBy(pool: pg.Pool, holder: number): Promise<number[]> {
  const { rows } = await pool.query(
    `SELECT pid FROM pg_stat_activity
     WHERE wait_event_type = 'Lock' AND backend_xid IS NOT NULL AND $1::int = ANY (pg_blocking_pids(pid))`,
    [holder],
  );
  return rows.map((row) => row.pid as number);
}

/** Whether the server still has a backend `pid`. */
async function backendAlive(pool: pg.Pool, pid: number): Promise<boolean> {
  const { rows } = await pool.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid]);
  return rows.length > 0;
}

/** Whether each of commit n's three writes is there. */
async function commitParts(dir: string, numbers: number[]): Promise<Record<number, boolean[]>> {
  const stores = await openContractStores(await openState(dir), dir);
  try {
    const pending = new Set(stores.inbox.pending().map((entry) => entry.message.messageId));
    return Object.fromEntries(
      numbers.map((n) => [
        n,
        [
          stores.sessions.get(commitSessionKey(n)) !== undefined,
          pending.has(`c${n}`),
          stores.outbox.get(`commit:${n}`) !== undefined,
        ],
      ]),
    );
  } finally {
    await stores.close();
  }
}

describe("a commit torn by a SIGKILL on PostgreSQL", () => {
  it("is rolled back whole when the writer dies with the commit half written, and the next writer's commits land whole", async () => {
    // The writer child and openState find the server here (open-postgres-state.ts).
    process.env[PG_URL_ENV] = server().url;
    // pool.end() resolves before its connections' sockets close; the server, stopped right after
    // (afterAll), ends the ones still open with a FATAL 57P01: testPool listens for it.
    const pool = testPool({ connectionString: server().url, max: 3 });
    const dir = await mkdtemp(path.join(os.tmpdir(), "sb-pg-torn-"));
    onTestFinished(async () => {
      await pool.end();
      await rm(dir, { recursive: true, force: true });
    });
    await (await openContractStores(await openState(dir), dir)).close(); // creates and migrates the schema
    const { rows } = await pool.query(
      "SELECT table_schema FROM information_schema.tables WHERE table_name = 'state_rows'",
    );
    const schema = rows[0].table_schema as string;

    // The test's transaction writes outbox row `commit:0` first and stays open: the writer's first
    // batch (commits 0-4, one statement) writes rows up to that one and waits for it.
    const holder = await pool.connect();
    const holderPid = (await holder.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
    await holder.query("BEGIN");
    await holder.query(`INSERT INTO ${schema}.state_rows (tbl, key, value) VALUES ('outbox', 'commit:0', '{}')`);
    const opener = await compiledScript(OPENER);
    let writer: number | undefined;
    const acked = await runAndKill("state-writer.ts", [opener, dir, "0", "commit"], 20_000, async () => {
      writer = (await writersBlockedBy(pool, holderPid))[0];
      return writer !== undefined;
    });
    // Killed because its batch had written part and waited on the held row, not by the time limit.
    expect(writer, "the writer never waited on the held row with part of its batch written").toBeDefined();
    expect(acked).toEqual([]);
    // The server rolls the dead client's statement back by itself and ends its backend, while the row is still held.
    await until(async () => !(await backendAlive(pool, writer!)), 10_000);
    await holder.query("ROLLBACK");
    holder.release();
    const none = [false, false, false];
    expect(await commitParts(dir, [0, 1, 2, 3, 4])).toEqual({ 0: none, 1: none, 2: none, 3: none, 4: none });

    const next = await runAndKill("state-writer.ts", [opener, dir, "1000000", "commit"], 300);
    expect(next.length).toBeGreaterThan(0);
    const whole = Object.values(await commitParts(dir, next));
    expect(whole.every((parts) => parts.every(Boolean))).toBe(true);
  }, 60_000);
});
