import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { PassThrough, Readable } from "node:stream";
import { CHANNELS } from "../../adapters/index.js";
import { type CliIo, runCli } from "../../src/cli/main.js";

/** A temporary SWITCHBOARD_HOME. */
export async function tempHome(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), "sb-home-"));
}

/** What {@link cli} runs with besides its arguments. */
interface CliOptions {
  home: string;
  /** piped to stdin; without it stdin is an empty terminal */
  stdin?: string;
  env?: Record<string, string>;
  /** stderr is a terminal this many columns wide (progress bars show); else a pipe */
  terminalColumns?: number;
}

/** A stderr that is a terminal `columns` wide, each write passed to `write`. */
function terminalStderr(columns: number, write: (text: string) => void) {
  const terminal = Object.assign(new PassThrough(), { isTTY: true, columns });
  terminal.on("data", (chunk: Buffer) => write(chunk.toString()));
  return terminal;
}

/** Runs the CLI in-process with captured output; `stdin` is piped when given. */
export async function cli(argv: string[], opts: CliOptions) {
  let stdout = "";
  let stderr = "";
  const stdin = Object.assign(Readable.from(opts.stdin === undefined ? [] : [opts.stdin]), {
    isTTY: opts.stdin === undefined,
  });
  const toStderr = (s: string) => (stderr += s);
  const io: CliIo = {
    env: { SWITCHBOARD_HOME: opts.home, ...opts.env },
    stdin,
    stdout: { write: (s: string) => (stdout += s) },
    stderr: opts.terminalColumns === undefined ? { write: toStderr } : terminalStderr(opts.terminalColumns, toStderr),
    cwd: opts.home,
    homeDir: opts.home,
    // The channel table, as bin/entry.ts passes it: configs are checked as the real CLI checks them.
    channels: async () => CHANNELS,
  };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}
