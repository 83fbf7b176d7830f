// A real PostgreSQL server for tests: a temporary data directory made by `initdb` (as the `postgres`
// user when the tests run as root: initdb refuses root), listening on 127.0.0.1 on a free port,
// stopped by its PID. Tests share one per run (./postgres.ts); a test that stops the server
// (the fault tests) starts its own with `startPostgresServer`.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants, readFileSync, readdirSync, rmSync } from "node:fs";
import { chmod, chown, mkdtemp, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { processAlive } from "../../src/state/process-alive.js";

const run = promisify(execFile);

/** The env var carrying the run's server url to child processes a test starts (crash children, gateways). */
export const PG_URL_ENV = "SB_TEST_PG_URL";

/** Where the PostgreSQL programs are. */
interface PostgresBinaries {
  initdb: string;
  pgCtl: string;
}

/** A running (or stopped, restartable) test server. */
export interface PostgresServer {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/postgres` */
  readonly url: string;
  readonly port: number;
  readonly password: string;
  /** the folder holding the data directory, the socket and the log */
  readonly root: string;
  /** The postmaster's PID while it runs. */
  pid(): number | undefined;
  /** Stops the server ("fast": clean shutdown; "immediate": like a crash, recovery at next start); waits until it is gone. */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it and removes its folder. */
  destroy(): Promise<void>;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// Where Debian's packages put the programs (one folder per major version); SB_TEST_PG_LIBDIR moves it,
// to check what a machine without PostgreSQL shows.
const DEBIAN_LIB = process.env.SB_TEST_PG_LIBDIR ?? "/usr/lib/postgresql";

/** `name` on PATH, else in Debian's /usr/lib/postgresql/<version>/bin (newest version first). */
function findProgram(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (dir && executable(path.join(dir, name))) return path.join(dir, name);
  }
  let versions: string[] = [];
  try {
    versions = readdirSync(DEBIAN_LIB).sort((a, b) => Number(b) - Number(a));
  } catch {
    return undefined;
  }
  for (const version of versions) {
    const file = path.join(DEBIAN_LIB, version, "bin", name);
    if (executable(file)) return file;
  }
  return undefined;
}

/** The programs, or why the PostgreSQL tests cannot run here. */
export function findPostgresBinaries(): PostgresBinaries | { missing: string } {
  const initdb = findProgram("initdb");
  const pgCtl = findProgram("pg_ctl");
  if (!initdb || !pgCtl)
    return {
      missing:
        "PostgreSQL is not installed (initdb/pg_ctl not on PATH nor in /usr/lib/postgresql/*/bin): apt-get install postgresql",
    };
  return { initdb, pgCtl };
}

/** Runs a PostgreSQL program as the `postgres` user when we are root (initdb and postgres refuse root). */
function asServerUser(program: string, args: string[]): Promise<unknown> {
  if (process.getuid?.() === 0) return run("runuser", ["-u", "postgres", "--", program, ...args]);
  return run(program, args);
}

async function serverUserIds(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const [uid, gid] = await Promise.all([run("id", ["-u", "postgres"]), run("id", ["-g", "postgres"])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** A port free on 127.0.0.1 right now (the server may still lose a race for it: start retries). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The postmaster's PID from its pid file, if the file is there. */
function readPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Waits until `pid` is gone (a condition, polled: the postmaster is not our child). */
async function waitGone(pid: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (processAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`PostgreSQL (pid ${pid}) did not stop within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Stops the server whose data directory is `dataDir` by the PID in its pid file, and waits until it
 * is gone: SIGINT is PostgreSQL's fast shutdown, SIGQUIT its immediate one (recovery at next start).
 */
export async function stopPostgresByPid(dataDir: string, mode: "fast" | "immediate" = "fast"): Promise<void> {
  const pid = readPid(dataDir);
  if (pid === undefined || !processAlive(pid)) return;
  process.kill(pid, mode === "fast" ? "SIGINT" : "SIGQUIT");
  await waitGone(pid);
}

/** Synchronous best effort for exit hooks: asks the server to stop (immediate) and removes its folder. */
export function killPostgresSync(root: string): void {
  const pid = readPid(path.join(root, "data"));
  if (pid !== undefined && processAlive(pid)) process.kill(pid, "SIGQUIT");
  rmSync(root, { recursive: true, force: true });
}

// Durability against a crash of the machine is not what tests check (they kill processes, whose
// writes the kernel keeps): without fsync the server is several times faster on a shared machine.
const SERVER_SETTINGS = ["fsync=off", "full_page_writes=off", "max_connections=300", "shared_buffers=32MB"];

async function initCluster(bins: PostgresBinaries, root: string, password: string): Promise<void> {
  const ids = await serverUserIds();
  await chmod(root, 0o700);
  if (ids) await chown(root, ids.uid, ids.gid);
  const pwfile = path.join(root, "pw");
  await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  if (ids) await chown(pwfile, ids.uid, ids.gid);
  await asServerUser(bins.initdb, [
    ...["-D", path.join(root, "data"), "-U", "postgres", "--pwfile", pwfile],
    ...["--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", "--encoding=UTF8", "--no-locale"],
  ]);
  rmSync(pwfile);
}

async function startCluster(bins: PostgresBinaries, root: string, port: number, settings: string[]): Promise<void> {
  const options = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${root}`,
    // The later of two settings of one name wins: `settings` override the test defaults.
    ...[...SERVER_SETTINGS, ...settings].map((setting) => `-c ${setting}`),
  ].join(" ");
  const log = path.join(root, "server.log");
  await asServerUser(bins.pgCtl, ["-D", path.join(root, "data"), "-l", log, "-w", "-t", "60", "-o", options, "start"]);
}

/**
 * Starts a server of its own (initdb in a new temporary folder); `destroy()` it at the end.
 * `settings` ("name=value") override the test defaults (the bench turns fsync back on).
 */
export async function startPostgresServer(settings: string[] = []): Promise<PostgresServer> {
  const bins = findPostgresBinaries();
  if ("missing" in bins) throw new Error(bins.missing);
  const root = await mkdtemp(path.join(os.tmpdir(), "sb-pg-"));
  const dataDir = path.join(root, "data");
  const password = randomBytes(12).toString("hex");
  await initCluster(bins, root, password);
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      await startCluster(bins, root, port, settings);
      break;
    } catch (err) {
      // Another process may have taken the port between our probe and the server's bind.
      if (attempt >= 3) {
        const log = readFileSync(path.join(root, "server.log"), "utf8");
        throw new Error(`PostgreSQL did not start in ${root}: ${(err as Error).message}\n${log}`);
      }
    }
  }
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    port,
    password,
    root,
    pid: () => readPid(dataDir),
    stop: (mode) => stopPostgresByPid(dataDir, mode),
    start: () => startCluster(bins, root, port, settings),
    async destroy() {
      await stopPostgresByPid(dataDir);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
