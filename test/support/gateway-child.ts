// Gateways in their own processes, for tests that SIGKILL them: start one from a script in
// test/fakes/, wait for its "url" line, kill it hard, and poll for a condition.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { afterEach } from "vitest";
import { connectGateway } from "../../src/cli/gateway-client.js";

/** A started child and what it wrote to stderr so far. */
export interface GatewayChild {
  process: ChildProcess;
  /** the gateway's WebSocket URL, from its "url" line */
  url: string;
  stderr(): string;
}

/** How to start a child: `descriptorLimit` lowers its open-file limit (`ulimit -n`) before node starts. */
interface ChildOptions {
  descriptorLimit?: number;
}

/** Returns a `start` function whose children are all SIGKILLed after each test of the calling file. */
export function useGatewayChildren(): (
  script: string,
  env: Record<string, string>,
  options?: ChildOptions,
) => Promise<GatewayChild> {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill("SIGKILL");
  });
  return (script, env, options = {}) => {
    const file = path.resolve(import.meta.dirname, "../fakes", script);
    const node = [process.execPath, "--import", "tsx", file];
    // `exec` keeps one process, so the pid killed after the test is node's own.
    const [command, ...args] =
      options.descriptorLimit === undefined
        ? node
        : ["/bin/sh", "-c", `ulimit -n ${options.descriptorLimit} && exec "$@"`, "sh", ...node];
    const child = spawn(command!, args, {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    return new Promise((resolve, reject) => {
      child.stdout!.on("data", (chunk: Buffer) => {
        const url = /url (\S+)/.exec(chunk.toString())?.[1];
        if (url) resolve({ process: child, url, stderr: () => stderr });
      });
      child.once("exit", (code) => reject(new Error(`gateway process exited early (${code}): ${stderr.slice(-2000)}`)));
    });
  };
}

/** SIGKILL: no handler runs, nothing is flushed. */
export async function killHard(child: GatewayChild): Promise<void> {
  const exited = new Promise((resolve) => child.process.once("exit", resolve));
  child.process.kill("SIGKILL");
  await exited;
}

/** Polls `check` every 20 ms until it holds; throws after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The gateway's `status` answer, or undefined while it does not answer (it is starting, or gone). */
export function gatewayStatus<T>(url: string): Promise<T | undefined> {
  return gatewayCall<T>(url, "status");
}

/** A gateway method's answer (no params, no token), or undefined while the gateway does not answer. */
export async function gatewayCall<T>(url: string, method: string): Promise<T | undefined> {
  try {
    const client = await connectGateway(url, undefined, { timeoutMs: 1_500 });
    try {
      return await client.call<T>(method);
    } finally {
      await client.close();
    }
  } catch {
    return undefined;
  }
}
