import { Command, CommanderError } from "commander";
import { type CliIo, CliExit, ExitCode, err } from "./cli-io.js";

export type { CliIo };
import { registerConfigCommand } from "./config-command.js";
import { registerRouteCommand } from "./route-command.js";
import { registerSessionsCommand } from "./sessions-command.js";
import { registerStatusCommand } from "./status-command.js";

/** Builds the `switchboard` program with every command bound to `io`. */
export function buildProgram(io: CliIo, now: () => number = Date.now): Command {
  const program = new Command("switchboard")
    .description("Switchboard: sessions, routing and owner commands between chat platforms and AI agents")
    .option("--config <file>", "config file (default $SWITCHBOARD_CONFIG, else $SWITCHBOARD_HOME/switchboard.json5)")
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
  registerConfigCommand(program, io);
  registerRouteCommand(program, io);
  registerSessionsCommand(program, io, now);
  registerStatusCommand(program, io, now);
  for (const command of program.commands) command.exitOverride();
  return program;
}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const program = buildProgram(io);
  if (argv.length === 0) {
    program.outputHelp();
    return ExitCode.ok;
  }
  try {
    await program.parseAsync(argv, { from: "user" });
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof CliExit) return error.code;
    if (error instanceof CommanderError) {
      // help and version end through exitOverride with code 0; usage mistakes are bad input.
      return error.exitCode === 0 ? ExitCode.ok : ExitCode.badInput;
    }
    err(io, `error: ${(error as Error).message}`);
    return ExitCode.failure;
  }
}
