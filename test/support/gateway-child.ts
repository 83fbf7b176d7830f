// Gateways in their own processes, for tests that SIGKILL them: start one from a script in
// test/fakes/, wait for its "url" line, kill it hard, and poll for a condition.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import type { Readable } from "node:stream";
import { afterEach } from "vitest";
import { connectGateway } from "../../src/cli/gateway-client.js";
import { compiledScript } from "./compiled-script.js";

/** A started child and what it wrote to stderr so far. */
export interface GatewayChild {
  process: ChildProcess;
  /** the gateway's WebSocket URL, from its "url" line */
  url: string;
  stderr(): string;
  /** Settles once the child's `core.idle()` did (test/fakes/answer-idle.ts): nothing more is under way. */
  idle(): Promise<void>;
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
  return async (script, env, options = {}) => {
    const node = [process.execPath, await compiledScript(path.resolve(import.meta.dirname, "../fakes", script))];
    // `exec` keeps one process, so the pid killed after the test is node's own.
    const [command, ...args] =
      options.descriptorLimit === undefined
        ? node
        : ["/bin/sh", "-c", `ulimit -n ${options.descriptorLimit} && exec "$@"`, "sh", ...node];
    const child = spawn(command!, args, {
      env: { ...process.env, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    children.push(child);
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // Each "idle" line answers the oldest idle request still waiting.
    const idleWaiters: Array<() => void> = [];
    const idle = () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        child.stdin!.write("idle\n");
      });
    child.stdin!.on("error", () => undefined); // a killed child's pipe: nothing to tell it any more
    return new Promise((resolve, reject) => {
      eachLine(child.stdout!, (line) => {
        if (line === "idle") idleWaiters.shift()?.();
        const url = /^url (\S+)/.exec(line)?.[1];
        if (url) resolve({ process: child, url, stderr: () => stderr, idle });
      });
      child.once("exit", (code) => reject(new Error(`gateway process exited early (${code}): ${stderr.slice(-2000)}`)));
    });
  };
}

/** Calls `onLine` with each whole line `stream` (a child's stdout) writes. */
export function eachLine(stream: Readable, onLine: (line: string) => void): void {
  let partial = "";
  stream.on("data", (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split("\n");
    partial = lines.pop()!;
    for (const line of lines) onLine(line);
  });
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

/** One gateway method call on a fresh connection to a child; a refusal rejects with the gateway's error. */
export async function callChild<T>(child: GatewayChild, method: string, params: unknown): Promise<T> {
  const client = await connectGateway(child.url);
  try {
    return await client.call<T>(method, params);
  } finally {
    await client.close();
  }
}
