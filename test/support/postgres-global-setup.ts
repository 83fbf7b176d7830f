// Vitest global setup for the run's shared PostgreSQL (./postgres.ts): names the run's coordination
// folder for the workers, and at the end stops the server a worker started, by its PID. It also
// stops servers left by runs that died without their teardown (their vitest process is gone).
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { processAlive } from "../../src/state/process-alive.js";
import { PG_RUN_ENV } from "./postgres.js";
import { killPostgresSync, stopPostgresByPid } from "./postgres-server.js";

const PREFIX = "sb-pg-run-";

/** The server root a run folder recorded, if a worker started one. */
function recordedRoot(runDir: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(path.join(runDir, "server.json"), "utf8")) as { root: string }).root;
  } catch {
    return undefined;
  }
}

function removeDeadRuns(): void {
  for (const name of readdirSync(os.tmpdir())) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(name.slice(PREFIX.length).split("-")[0]);
    if (!pid || processAlive(pid)) continue;
    const runDir = path.join(os.tmpdir(), name);
    const root = recordedRoot(runDir);
    if (root) killPostgresSync(root);
    rmSync(runDir, { recursive: true, force: true });
  }
}

/** Runs once per project of the run; only the first call (which names the folder) tears down. */
export default function setup(): (() => Promise<void>) | undefined {
  if (process.env[PG_RUN_ENV]) return undefined;
  removeDeadRuns();
  const runDir = mkdtempSync(path.join(os.tmpdir(), `${PREFIX}${process.pid}-`));
  process.env[PG_RUN_ENV] = runDir;
  return async () => {
    const root = recordedRoot(runDir);
    if (root) {
      await stopPostgresByPid(path.join(root, "data"));
      rmSync(root, { recursive: true, force: true });
    }
    rmSync(runDir, { recursive: true, force: true });
  };
}
