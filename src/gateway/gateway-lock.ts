import { mkdir, open, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { ErrorCodes, SwitchboardError } from "../errors.js";
import { processAlive } from "../state/process-alive.js";

/** Creates `dir` and its missing parents one level at a time; Node's recursive mkdir spins for ever where the kernel answers ENOENT to a parent that exists (/proc). */
async function makeDir(dir: string): Promise<void> {
  try {
    await mkdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return;
    if (code !== "ENOENT" || path.dirname(dir) === dir) throw err;
    await makeDir(path.dirname(dir));
    await mkdir(dir).catch((again: NodeJS.ErrnoException) => {
      if (again.code !== "EEXIST") throw again;
    });
  }
}

/** Makes sure the state folder exists and is a folder; else one error naming it and the fix. */
async function ensureHome(home: string): Promise<void> {
  try {
    await makeDir(home);
    if (!(await stat(home)).isDirectory()) throw new Error("it is not a folder");
  } catch (err) {
    throw new SwitchboardError(
      ErrorCodes.INVALID_ARGUMENT,
      `cannot use ${home} as the state folder (${(err as Error).message}); set SWITCHBOARD_HOME to a folder you can write`,
    );
  }
}

/** What `<home>/gateway.lock` says about the gateway holding it. */
export interface GatewayLockInfo {
  pid: number;
  /** the port asked for until the gateway listens, then the port it listens on */
  port: number;
  /** ws://host:port, once the gateway listens */
  url?: string;
  startedAt?: string;
}

/** The gateway holding `<home>/gateway.lock`, or undefined when there is none or its process is gone. */
export async function readGatewayLock(home: string): Promise<GatewayLockInfo | undefined> {
  const text = await readFile(path.join(home, "gateway.lock"), "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const info = JSON.parse(text) as Partial<GatewayLockInfo>;
    return typeof info.pid === "number" && typeof info.port === "number" && processAlive(info.pid)
      ? (info as GatewayLockInfo)
      : undefined;
  } catch {
    return undefined; // torn or foreign content: no gateway the CLI can name
  }
}

/**
 * Takes `<home>/gateway.lock` so two gateways never write the same state. A lock left by a
 * process that no longer runs is taken over; a live holder is named in the error.
 */
export async function acquireGatewayLock(
  home: string,
  info: { port: number },
): Promise<{ release: () => Promise<void>; listening: (at: { port: number; url: string }) => Promise<void> }> {
  await ensureHome(home);
  const file = path.join(home, "gateway.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, "wx", 0o600);
      const held = { pid: process.pid, port: info.port, startedAt: new Date().toISOString() };
      await handle.writeFile(JSON.stringify(held));
      await handle.close();
      return {
        release: () => unlink(file).catch(() => undefined), // already gone is fine
        // The port actually bound (--port 0 picks one), so the CLI finds this gateway; renamed in whole.
        async listening(at) {
          await writeFile(`${file}.${process.pid}.tmp`, JSON.stringify({ ...held, ...at }), { mode: 0o600 });
          await rename(`${file}.${process.pid}.tmp`, file);
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = await readGatewayLock(home);
      if (holder) {
        throw new SwitchboardError(
          ErrorCodes.INVALID_ARGUMENT,
          `another gateway (pid ${holder.pid}${holder.port ? `, port ${holder.port}` : ""}) already runs on ${home}; stop it first, or use another SWITCHBOARD_HOME (lock: ${file})`,
        );
      }
      await unlink(file).catch(() => undefined); // stale lock from a process that is gone
    }
  }
  throw new SwitchboardError(ErrorCodes.INVALID_ARGUMENT, `could not take ${file}`);
}
