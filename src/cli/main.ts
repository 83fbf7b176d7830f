import { Command, CommanderError } from "commander";
import { type CliIo, CliExit, type CliSignals, ExitCode, err } from "./cli-io.js";

export type { CliIo };
import { registerChannelsCommand } from "./channels-command.js";
import { registerChatCommand } from "./chat-command.js";
import { registerClusterCommand } from "./cluster-command.js";
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

type Register = (program: Command, io: CliIo, now: () => number, signals: CliSignals) => void;

/** Every command, in the order help lists them. */
const COMMANDS: Record<string, Register> = {
  config: (program, io) => registerConfigCommand(program, io),
  doctor: (program, io, now) => registerDoctorCommand(program, io, now),
  route: (program, io) => registerRouteCommand(program, io),
  sessions: (program, io, now) => registerSessionsCommand(program, io, now),
  status: (program, io, now) => registerStatusCommand(program, io, now),
  gateway: (program, io, _now, signals) => registerGatewayCommand(program, io, signals),
  chat: (program, io) => registerChatCommand(program, io),
  channels: (program, io, now) => registerChannelsCommand(program, io, now),
  tools: (program, io) => registerToolsCommand(program, io),
  cron: (program, io, now) => registerCronCommand(program, io, now),
  pairing: (program, io, now) => registerPairingCommand(program, io, now),
  import: (program, io) => registerImportCommand(program, io),
  health: (program, io) => registerHealthCommand(program, io),
  inbox: (program, io, now) => registerInboxCommand(program, io, now),
  workspace: (program, io) => registerWorkspaceCommand(program, io),
  state: (program, io) => registerStateCommand(program, io),
  cluster: (program, io) => registerClusterCommand(program, io),
};

/**
 * Builds the `switchboard` program with every command bound to `io`; with `only`, that command alone
 * (what a run of it needs: the others are defined for help, which lists them all).
 */
export function buildProgram(
  io: CliIo,
  now: () => number = Date.now,
  signals: CliSignals = NO_SIGNALS,
  only?: string,
): Command {
  const program = new Command("switchboard")
    .description("Switchboard: sessions, routing and owner commands between chat platforms and AI agents")
    .option("--config <file>", "config file (default $SWITCHBOARD_CONFIG, else $SWITCHBOARD_HOME/switchboard.json5)")
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
  for (const [name, register] of Object.entries(COMMANDS))
    if (only === undefined || name === only) register(program, io, now, signals);
  for (const command of program.commands) command.exitOverride();
  return program;
}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function runCli(argv: string[], io: CliIo, signals: CliSignals = NO_SIGNALS): Promise<number> {
  // `switchboard status ...` needs the status command only; anything else (help, a typo) gets them all.
  const only = argv[0] !== undefined && Object.hasOwn(COMMANDS, argv[0]) ? argv[0] : undefined;
  const program = buildProgram(io, Date.now, signals, only);
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
