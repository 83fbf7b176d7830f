// The test run's PostgreSQL: one real server for the whole run, started by the first test file that
// needs one (a run without PostgreSQL tests starts none) and stopped by the run's global teardown
// (./postgres-global-setup.ts); each test file works in a fresh schema of its own.
// Workers coordinate through a folder named by the global setup (SB_TEST_PG_RUN): the first one takes
// a lock (mkdir), starts the server and writes its url; the others wait for the url. Run outside the
// global setup (a single file through another config), a worker starts a server of its own and
// stops it when it exits.
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { processAlive } from "../../src/state/process-alive.js";
import {
  PG_URL_ENV,
  type PostgresServer,
  findPostgresBinaries,
  killPostgresSync,
  startPostgresServer,
} from "./postgres-server.js";

/** The env var naming the run's coordination folder (set by the global setup). */
export const PG_RUN_ENV = "SB_TEST_PG_RUN";

/** The shared server's record in the run folder. */
interface ServerRecord {
  url: string;
  root: string;
}

let shared: Promise<ServerRecord> | undefined;

/** Why the PostgreSQL tests cannot run on this machine, or undefined when they can. */
function postgresUnavailable(): string | undefined {
  const bins = findPostgresBinaries();
  return "missing" in bins ? bins.missing : undefined;
}

async function startOwn(): Promise<ServerRecord> {
  const server = await startPostgresServer();
  process.once("exit", () => killPostgresSync(server.root));
  return { url: server.url, root: server.root };
}

/** Reads the run's server record; undefined while none is written. */
function readRecord(runDir: string): ServerRecord | undefined {
  try {
    return JSON.parse(readFileSync(path.join(runDir, "server.json"), "utf8")) as ServerRecord;
  } catch {
    return undefined;
  }
}

/** Takes the start lock, or learns who holds it; a lock whose holder died is taken over. */
function takeLock(lockDir: string): boolean {
  try {
    mkdirSync(lockDir);
    writeFileSync(path.join(lockDir, "pid"), String(process.pid));
    return true;
  } catch {
    let holder = 0;
    try {
      holder = Number(readFileSync(path.join(lockDir, "pid"), "utf8"));
    } catch {
      return false; // the holder is between mkdir and writing its pid
    }
    if (holder && !processAlive(holder)) rmSync(lockDir, { recursive: true, force: true });
    return false;
  }
}

async function joinRun(runDir: string): Promise<ServerRecord> {
  const lockDir = path.join(runDir, "starting");
  const deadline = Date.now() + 120_000;
  for (;;) {
    const record = readRecord(runDir);
    if (record) return record;
    if (takeLock(lockDir)) {
      const server = await startPostgresServer();
      const started: ServerRecord = { url: server.url, root: server.root };
      writeFileSync(path.join(runDir, "server.json.tmp"), JSON.stringify(started));
      renameSync(path.join(runDir, "server.json.tmp"), path.join(runDir, "server.json"));
      return started;
    }
    if (Date.now() > deadline) throw new Error(`no PostgreSQL test server appeared in ${runDir} within 120 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The run's shared server (started on first use); its url is also put in SB_TEST_PG_URL for child processes. */
async function sharedPostgres(): Promise<{ url: string }> {
  const runDir = process.env[PG_RUN_ENV];
  shared ??= runDir ? joinRun(runDir) : startOwn();
  const record = await shared;
  process.env[PG_URL_ENV] = record.url;
  return { url: record.url };
}

/** A schema name no other test uses: `t_<random>` (lower case letters, digits and `_`). */
export function freshSchema(prefix = "t"): string {
  return `${prefix}_${randomBytes(6).toString("hex")}`;
}

/** What {@link usePostgres} gives the tests of a file once its `beforeAll` ran. */
export interface PostgresTestContext {
  /** the shared server's url */
  readonly url: string;
  /** this file's fresh schema */
  readonly schema: string;
}

/**
 * Declares that the tests of the calling file (or describe block) need PostgreSQL: the run's server
 * and a fresh schema for the file. Where PostgreSQL is not installed, each test shows as skipped with
 * the reason; under CI=true that is a failure instead, since CI must run them.
 */
export function usePostgres(): PostgresTestContext {
  const unavailable = postgresUnavailable();
  let url = "";
  const schema = freshSchema();
  beforeAll(async () => {
    if (unavailable) {
      if (process.env.CI === "true") throw new Error(`CI must run the PostgreSQL tests: ${unavailable}`);
      return;
    }
    url = (await sharedPostgres()).url;
  }, 120_000);
  beforeEach((context) => {
    if (unavailable) context.skip(unavailable);
  });
  return {
    get url() {
      return url;
    },
    schema,
  };
}

/**
 * A PostgreSQL server of the calling file's own (its own initdb), for tests that stop and start it:
 * never stop the run's shared server. Returns a getter valid once `beforeAll` ran; skipped and
 * failing under CI exactly as {@link usePostgres}. `settings` ("name=value") are the server's own.
 */
export function usePrivatePostgres(settings: string[] = []): () => PostgresServer {
  const shared = usePostgres();
  let server: PostgresServer | undefined;
  beforeAll(async () => {
    if (shared.url) server = await startPostgresServer(settings);
  }, 120_000);
  afterAll(() => server?.destroy());
  return () => {
    if (!server) throw new Error("the private PostgreSQL server is not started (is PostgreSQL installed?)");
    return server;
  };
}

/**
 * A pool a test reads the database with. It listens for `error`: when a server stops (a private one
 * in `afterAll`, the run's at teardown) or ends a backend, an idle client's FATAL 57P01 would
 * otherwise be an uncaught exception in the test worker (pg-pool re-emits it on the pool).
 */
export function testPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on("error", () => {});
  return pool;
}
