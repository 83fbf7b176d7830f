import { mkdir, open, readFile, unlink } from "node:fs/promises";
import path from "node:path";
import { ErrorCodes, SwitchboardError } from "../errors.js";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Who holds `<home>/gateway.lock`, when that process still runs (a running gateway, or a CLI writing state). */
export async function liveLockHolder(home: string): Promise<{ pid: number; port?: number } | undefined> {
  const file = path.join(home, "gateway.lock");
  const holder = JSON.parse(await readFile(file, "utf8").catch(() => "{}")) as { pid?: number; port?: number };
  if (typeof holder.pid !== "number" || !alive(holder.pid)) return undefined;
  return { pid: holder.pid, ...(typeof holder.port === "number" && { port: holder.port }) };
}

/**
 * Takes `<home>/gateway.lock` so two gateways never write the same state. A lock left by a
 * process that no longer runs is taken over; a live holder is named in the error.
 */
export async function acquireGatewayLock(
  home: string,
  info: { port: number },
): Promise<{ release: () => Promise<void> }> {
  await mkdir(home, { recursive: true });
  const file = path.join(home, "gateway.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, "wx", 0o600);
      await handle.writeFile(
        JSON.stringify({ pid: process.pid, port: info.port, startedAt: new Date().toISOString() }),
      );
      await handle.close();
      return { release: () => unlink(file).catch(() => undefined) }; // already gone is fine
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = await liveLockHolder(home);
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
