import { Command, CommanderError } from "commander";
import { type CliIo, CliExit, type CliSignals, ExitCode, err } from "./cli-io.js";

export type { CliIo };
import { registerChannelsCommand } from "./channels-command.js";
import { registerChatCommand } from "./chat-command.js";
import { registerConfigCommand } from "./config-command.js";
import { registerCronCommand } from "./cron-command.js";
import { registerDoctorCommand } from "./doctor-command.js";
import { registerInboxCommand } from "./inbox-command.js";
import { registerGatewayCommand } from "./gateway-command.js";
import { registerHealthCommand } from "./health-command.js";
import { GatewayCallError } from "./gateway-client.js";
import { registerPairingCommand } from "./pairing-command.js";
import { registerImportCommand } from "./import-command.js";
import { registerRouteCommand } from "./route-command.js";
import { registerSessionsCommand } from "./sessions-command.js";
import { registerStateCommand } from "./state-command.js";
import { registerStatusCommand } from "./status-command.js";
import { registerToolsCommand } from "./tools-command.js";
import { registerWorkspaceCommand } from "./workspace-command.js";

const NO_SIGNALS: CliSignals = { onStop: () => undefined };

/** Builds the `switchboard` program with every command bound to `io`. */
export function buildProgram(io: CliIo, now: () => number = Date.now, signals: CliSignals = NO_SIGNALS): Command {
  const program = new Command("switchboard")
    .description("Switchboard: sessions, routing and owner commands between chat platforms and AI agents")
    .option("--config <file>", "config file (default $SWITCHBOARD_CONFIG, else $SWITCHBOARD_HOME/switchboard.json5)")
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
  registerConfigCommand(program, io);
  registerDoctorCommand(program, io, now);
  registerRouteCommand(program, io);
  registerSessionsCommand(program, io, now);
  registerStatusCommand(program, io, now);
  registerGatewayCommand(program, io, signals);
  registerChatCommand(program, io);
  registerChannelsCommand(program, io, now);
  registerToolsCommand(program, io);
  registerCronCommand(program, io, now);
  registerPairingCommand(program, io, now);
  registerImportCommand(program, io);
  registerHealthCommand(program, io);
  registerInboxCommand(program, io, now);
  registerWorkspaceCommand(program, io);
  registerStateCommand(program, io);
  for (const command of program.commands) command.exitOverride();
  return program;
}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function runCli(argv: string[], io: CliIo, signals: CliSignals = NO_SIGNALS): Promise<number> {
  const program = buildProgram(io, Date.now, signals);
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
    if (error instanceof GatewayCallError) {
      err(io, `${error.code}: ${error.message}`);
      return ExitCode.failure;
    }
    err(io, `error: ${(error as Error).message}`);
    return ExitCode.failure;
  }
}
