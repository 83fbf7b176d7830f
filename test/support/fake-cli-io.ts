import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { CHANNELS } from "../../adapters/index.js";
import { type CliIo, runCli } from "../../src/cli/main.js";

/** A temporary SWITCHBOARD_HOME. */
export async function tempHome(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), "sb-home-"));
}

/** Runs the CLI in-process with captured output; `stdin` is piped when given. */
export async function cli(argv: string[], opts: { home: string; stdin?: string; env?: Record<string, string> }) {
  let stdout = "";
  let stderr = "";
  const stdin = Object.assign(Readable.from(opts.stdin === undefined ? [] : [opts.stdin]), {
    isTTY: opts.stdin === undefined,
  });
  const io: CliIo = {
    env: { SWITCHBOARD_HOME: opts.home, ...opts.env },
    stdin,
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    cwd: opts.home,
    homeDir: opts.home,
    // The channel table, as bin/entry.ts passes it: configs are checked as the real CLI checks them.
    channels: async () => CHANNELS,
  };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}
