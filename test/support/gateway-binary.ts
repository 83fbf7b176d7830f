// `bin/switchboard gateway run --port 0` as a child process, for tests that need the real process
// edge (its signal and unhandled-rejection handlers, its exit code).
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { afterEach } from "vitest";

const bin = path.resolve(import.meta.dirname, "../../bin/switchboard");

/** A running gateway process. */
export interface GatewayBinary {
  url: string;
  port: number;
  child: ChildProcess;
  output: () => string;
  exited: () => boolean;
}

/** Returns a `start` function whose processes are stopped after each test of the calling file (`port` 0: any free one). */
export function useGatewayBinaries(): (
  home: string,
  env?: Record<string, string>,
  port?: number,
) => Promise<GatewayBinary> {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill("SIGTERM");
  });
  return async (home, env = {}, port = 0) => {
    const child = spawn(bin, ["gateway", "run", "--port", String(port)], {
      env: { ...process.env, SWITCHBOARD_HOME: home, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    let output = "";
    let exited = false;
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", () => (exited = true));
    const url = await new Promise<string>((resolve, reject) => {
      const check = setInterval(() => {
        const match = /listening on (ws:\/\/\S+)/.exec(output);
        if (match) {
          clearInterval(check);
          resolve(match[1]!);
        }
      }, 20);
      child.once("exit", (code) => {
        clearInterval(check);
        reject(new Error(`gateway exited with ${code}: ${output}`));
      });
    });
    return { url, port: Number(new URL(url).port), child, output: () => output, exited: () => exited };
  };
}
