// Cluster members in processes of their own (test/fakes/cluster-node-process.ts, or another script of
// test/fakes such as partition-share-process.ts), and any other test/fakes/ script that talks in lines: start one, send it a command, wait for a line it prints.
// Every child is SIGKILLed after each test of the file.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { afterEach } from "vitest";
import { compiledScript } from "./compiled-script.js";
import { until } from "./gateway-child.js";

/** A running member: what it printed so far, and a way to send it commands. */
export interface NodeChild {
  process: ChildProcess;
  lines: string[];
  send(command: string): void;
  /** The first line printed (now or later) matching `pattern`. */
  line(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

/**
 * Returns a `start` function for members of `schema` on `url`, killed after each test; `script` (under
 * test/fakes) is the member's code, `env.more` extra environment for it.
 */
export function useClusterNodes(
  script = "cluster-node-process.ts",
): (env: {
  url: string;
  schema: string;
  nodeId: string;
  cluster: { leaseTtlMs: number; heartbeatMs: number };
  more?: Record<string, string>;
}) => Promise<NodeChild> {
  const start = useLineChildren(script);
  return (env) =>
    start({
      ...env.more,
      SB_PG_URL: env.url,
      SB_SCHEMA: env.schema,
      SB_NODE_ID: env.nodeId,
      SB_CLUSTER: JSON.stringify(env.cluster),
    });
}

/**
 * Returns a `start` function for processes of `script` (in test/fakes/) that print "ready ..." once
 * started and answer commands on stdin with lines on stdout; every child is SIGKILLed after each test.
 */
export function useLineChildren(script: string): (env: Record<string, string>) => Promise<NodeChild> {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill("SIGKILL");
  });
  return async (env) => {
    const compiled = await compiledScript(path.resolve(import.meta.dirname, "../fakes", script));
    const child = spawn(process.execPath, [compiled], {
      env: { ...process.env, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    children.push(child);
    child.stdin!.on("error", () => undefined);
    const lines: string[] = [];
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const early = new Promise<never>((_, reject) =>
      child.once("exit", (code) => reject(new Error(`${script} exited early (${code}): ${stderr.slice(-2000)}`))),
    );
    early.catch(() => undefined);
    let partial = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      const parts = (partial + chunk.toString()).split("\n");
      partial = parts.pop()!;
      lines.push(...parts);
    });
    const node: NodeChild = {
      process: child,
      lines,
      send: (command) => child.stdin!.write(`${command}\n`),
      async line(pattern, timeoutMs = 15_000) {
        await until(() => lines.some((line) => pattern.test(line)), timeoutMs);
        return lines.find((line) => pattern.test(line))!;
      },
    };
    await Promise.race([node.line(/^ready /, 30_000), early]);
    return node;
  };
}
