import path from "node:path";
import type { Command } from "commander";
import { acquireGatewayLock } from "../gateway/gateway-lock.js";
import type { ImportResult } from "../import/run-import.js";
import { ErrorCodes, isSwitchboardError } from "../errors.js";
import { createMemoryLogger } from "../logger.js";
import { type CliIo, CliExit, ExitCode, cliPaths, err, out } from "./cli-io.js";

/** A progress bar on a terminal's stderr ("importing [...] 3/10 files"); nothing when stderr is not a terminal. */
export async function progressBar(
  io: CliIo,
  label = "importing [{bar}] {value}/{total} files",
): Promise<{ update(done: number, total: number): void; stop(): void }> {
  const stream = io.stderr as NodeJS.WritableStream & { isTTY?: boolean };
  if (!stream.isTTY) return { update: () => undefined, stop: () => undefined };
  const { SingleBar } = await import("cli-progress"); // loaded with the command, not at start (src/cli/main.ts)
  const bar = new SingleBar({ stream, format: label, hideCursor: true });
  let started = false;
  return {
    update(done, total) {
      if (!started) bar.start(total, 0);
      started = true;
      bar.update(done);
    },
    stop: () => started && bar.stop(),
  };
}

function printResult(io: CliIo, result: ImportResult): void {
  const { sessions, transcripts } = result;
  out(io, `config      written to ${result.configWritten}`);
  out(
    io,
    `sessions    ${sessions.imported} imported of ${sessions.source} in the source; ${sessions.inTarget} found in the target`,
  );
  out(
    io,
    `transcripts ${transcripts.imported} copied of ${transcripts.source} in the source; ${transcripts.inTarget} found in the target`,
  );
  out(io, result.countsMatch ? "count check: ok" : "count check: FAILED (see the counts above)");
  for (const note of result.report.notes) out(io, `note        ${note.where}: ${note.reason}`);
  if (result.report.unmapped.length === 0) {
    out(io, "not mapped: nothing");
    return;
  }
  out(io, `not mapped (${result.report.unmapped.length}):`);
  for (const item of result.report.unmapped) out(io, `  ${item.where}: ${item.reason}`);
}

/** Imports a Clawdbot home under the gateway lock, with a progress bar; exits 2 on bad input, 1 when counts differ. */
async function importAction(
  io: CliIo,
  dir: string,
  flags: { merge?: boolean; json?: boolean },
  cmd: Command,
): Promise<void> {
  const paths = cliPaths(io, cmd.optsWithGlobals().config);
  // The gateway's lock: no gateway may start on the home while it is written, nor run already.
  const lock = await acquireGatewayLock(paths.home, { port: 0 });
  const bar = await progressBar(io);
  const { runImport } = await import("../import/run-import.js"); // loaded with the command, not at start (src/cli/main.ts)
  let result: ImportResult;
  try {
    // A source that is not a home, or a target with state: bad input, said plainly.
    result = await runImport({
      source: path.resolve(io.cwd, dir),
      home: paths.home,
      configFile: paths.configFile,
      homeDir: io.homeDir ?? paths.home,
      merge: flags.merge === true,
      logger: createMemoryLogger(),
      progress: (done, total) => bar.update(done, total),
    });
  } catch (error) {
    if (!isSwitchboardError(error) || error.code !== ErrorCodes.INVALID_ARGUMENT) throw error;
    err(io, error.message);
    throw new CliExit(ExitCode.badInput);
  } finally {
    bar.stop();
    await lock.release();
  }
  if (flags.json) out(io, JSON.stringify(result, null, 2));
  else printResult(io, result);
  if (!result.countsMatch) throw new CliExit(ExitCode.failure);
}

/** `switchboard import clawdbot <dir>`: a Clawdbot (Moltbot, OpenClaw) home into this Switchboard home. */
export function registerImportCommand(program: Command, io: CliIo): void {
  program
    .command("import")
    .description("bring a home of another system into $SWITCHBOARD_HOME")
    .command("clawdbot <dir>")
    .description(
      "import a Clawdbot / Moltbot / OpenClaw home (its config, sessions and transcripts); the source is only read",
    )
    .option(
      "--merge",
      "add to a home that already has state (sessions it has are kept; config written beside as .imported)",
    )
    .option("--json", "print the result as JSON")
    .action(async (dir: string, flags: { merge?: boolean; json?: boolean }, cmd: Command) =>
      importAction(io, dir, flags, cmd),
    );
}
