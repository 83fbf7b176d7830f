// The state backends a scenario test runs on, one test body for both: `describeBackends` defines the
// body once on the home's files ("local") and once on the run's PostgreSQL ("postgres", a fresh
// schema per home; skipped with the reason where PostgreSQL is not installed, failing under CI).
// A test reads what the gateway stored through `rows(table)`, whichever backend holds it.
import { readdir } from "node:fs/promises";
import path from "node:path";
import type pg from "pg";
import { afterAll, describe } from "vitest";
import { freshSchema, testPool, usePostgres } from "./postgres.js";
import { readStateFile } from "./read-state-file.js";
import { tempHome } from "./test-gateway.js";

/** A home for one gateway (or several, one after the other) and where its state is. */
export interface BackendHome {
  readonly home: string;
  /** the config's `state` section; undefined on local (the default) */
  readonly state: Record<string, unknown> | undefined;
  /** `state` as the process scripts in test/fakes/ take it (SB_STATE), empty on local */
  readonly env: Record<string, string>;
  /** Every row of the state table `table` (`outbox`, `inbox`, `subagents`, ...) as stored now. */
  rows(table: string): Promise<Record<string, Record<string, unknown>>>;
}

/** One backend: makes homes whose state it holds. */
export interface StateBackend {
  readonly name: "local" | "postgres";
  home(): Promise<BackendHome>;
}

const local: StateBackend = {
  name: "local",
  async home() {
    const home = await tempHome();
    const rows = (table: string) => readStateFile(path.join(home, "state", `${table}.json`));
    return { home, state: undefined, env: {}, rows };
  },
};

/** The backend on the run's PostgreSQL; its reading pool is closed after the calling block's tests. */
function postgresBackend(): StateBackend {
  const db = usePostgres();
  let pool: pg.Pool | undefined;
  afterAll(() => pool?.end());
  return {
    name: "postgres",
    async home() {
      const home = await tempHome();
      const schema = freshSchema();
      const state = { backend: "postgres", postgres: { url: db.url, schema, poolSize: 4 } };
      async function rows(table: string): Promise<Record<string, Record<string, unknown>>> {
        pool ??= testPool({ connectionString: db.url, max: 2 });
        // Before the gateway migrated the schema there is no table, and so no row.
        const exists = await pool.query("SELECT to_regclass($1) AS t", [`${schema}.state_rows`]);
        if (!exists.rows[0].t) return {};
        const result = await pool.query(`SELECT key, value FROM ${schema}.state_rows WHERE tbl = $1 ORDER BY ord`, [
          table,
        ]);
        return Object.fromEntries(result.rows.map((row) => [row.key, row.value]));
      }
      return { home, state, env: { SB_STATE: JSON.stringify(state) }, rows };
    },
  };
}

/** Defines `body` twice: as `<title> (local)` and as `<title> (postgres)`. */
export function describeBackends(title: string, body: (backend: StateBackend) => void): void {
  describe(`${title} (local)`, () => body(local));
  describe(`${title} (postgres)`, () => body(postgresBackend()));
}

// A home's files that are not state: the config, logs and the gateway's lock.
const NOT_STATE = [/^switchboard\.json5$/, /^gateway\.lock$/, /^logs\//, /\.log$/];
/**
 * The files of a home on PostgreSQL that hold state: everything but the config, logs and lock.
 * RED until the Telegram update offset (channels/telegram/<account>/offset.json) is on PostgreSQL
 * (helper "chanstate", issue #27): telegram-gateway.test.ts's postgres cases find it here.
 */
export async function stateFilesIn(home: string): Promise<string[]> {
  return (await filesUnder(home)).filter((file) => !NOT_STATE.some((pattern) => pattern.test(file)));
}

/** Every file under `dir`, relative to it. */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}
