import os from "node:os";
import type { Command } from "commander";
import type { Config } from "../config/index.js";
import type { ChannelAdapter } from "../delivery/channel-adapter.js";
import { isSwitchboardError } from "../errors.js";
import type { RunningGateway, StartGatewayOptions } from "../gateway/start-gateway.js";
import type { Logger } from "../logger.js";
import {
  type CliIo,
  CliExit,
  type CliSignals,
  ExitCode,
  cliPaths,
  createCliLogger,
  err,
  loadCliConfig,
  out,
  parseJsonFlag,
} from "./cli-io.js";
import { connectCli, printJson } from "./connect-cli.js";

/** What `gateway run` has ready before the gateway starts. */
interface RunSetup {
  config: Config;
  home: string;
  homeDir: string;
  logger: Logger;
  adapters: ChannelAdapter[];
  port: number | undefined;
}

function parsePort(io: CliIo, flag: string | undefined): number | undefined {
  const port = flag === undefined ? undefined : Number(flag);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) {
    err(io, `--port must be a port number, got "${flag}"`);
    throw new CliExit(ExitCode.badInput);
  }
  return port;
}

async function runSetup(
  io: CliIo,
  signals: CliSignals,
  flags: { port?: string },
  configFlag: string | undefined,
): Promise<RunSetup> {
  const { config } = await loadCliConfig(io, configFlag);
  const paths = cliPaths(io, configFlag);
  const logger = createCliLogger(io, config.logging.level);
  // One request's failure must not stop the gateway: log the whole error and keep serving.
  signals.onUnexpected?.((error) => logger.error({ err: error }, "unhandled rejection"));
  const port = parsePort(io, flags.port);
  const homeDir = io.homeDir ?? os.homedir();
  const adapters = (await io.channelAdapters?.(config, { home: paths.home, homeDir, env: io.env, logger })) ?? [];
  return { config, home: paths.home, homeDir, logger, adapters, port };
}

function startOptions(
  io: CliIo,
  setup: RunSetup,
  resolveModel: StartGatewayOptions["resolveModel"],
  signal: AbortSignal,
): StartGatewayOptions {
  const { config, home, homeDir, logger, adapters, port } = setup;
  return {
    config,
    home,
    homeDir,
    logger,
    adapters,
    resolveModel,
    env: io.env,
    ...(port !== undefined && { port }),
    ...(io.env.SWITCHBOARD_GATEWAY_TOKEN && { token: io.env.SWITCHBOARD_GATEWAY_TOKEN }),
    signal,
    onStandby: ({ url, owner }) =>
      out(
        io,
        `Switchboard gateway listening on ${url} as a standby: the owner is ${owner.nodeId} at ${owner.address}; this one takes over when it goes`,
      ),
  };
}

/** Says why the gateway did not start; a stop that ended a standby's wait is no failure. */
function failedStart(io: CliIo, config: Config, stop: AbortSignal, error: unknown): void {
  if (stop.aborted && config.state.backend === "postgres") {
    // The stop ends the wait of a standby; anything else that failed meanwhile is still said.
    if (!isSwitchboardError(error) || error.code !== "UNAVAILABLE")
      err(io, `while stopping: ${(error as Error).message}`);
    out(io, "stopped before it owned the schema (a standby, or still starting)");
    return;
  }
  if (!isSwitchboardError(error) && (error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
  err(io, `gateway not started: ${(error as Error).message}`);
  throw new CliExit(ExitCode.failure);
}

async function printListening(io: CliIo, setup: RunSetup, running: RunningGateway): Promise<void> {
  const { config, adapters } = setup;
  const model = running.core.resolveModelRef(config.agents.defaults.model);
  const http = running.url.replace(/^ws/, "http");
  out(io, `Switchboard gateway listening on ${running.url}`);
  out(io, `  control UI:    ${http}/`);
  if (adapters.length) out(io, `  channels:      ${adapters.map((adapter) => adapter.id).join(", ")}`);
  out(io, `  terminal chat: bin/switchboard chat`);
  out(
    io,
    `  model:         ${model}${model.startsWith("offline/") ? ' (built-in offline model: no network, no key; try "list sessions")' : ""}`,
  );
  out(io, `  state:         ${setup.home}`);
  const { sharedDmWarning } = await import("../inbound/account-overview.js"); // loaded with the command, not at start (src/cli/main.ts)
  const warning = sharedDmWarning(config);
  if (warning) err(io, `\nwarning: ${warning}\n`);
}

/** Runs the gateway in the foreground until a stop signal. */
async function runGateway(io: CliIo, signals: CliSignals, setup: RunSetup): Promise<void> {
  // Loaded here, not at the top: every other command starts without the gateway and the ai SDK.
  const { startGateway } = await import("../gateway/start-gateway.js");
  const { resolveModel } = await import("../agents/models/index.js");
  const { config } = setup;
  // Registered before the start: a standby (PostgreSQL) may be stopped while it waits to own its schema.
  const stop = new AbortController();
  const stopped = new Promise<void>((resolve) => signals.onStop(() => resolve(stop.abort())));
  let running: RunningGateway;
  const resolve = (ref: string) => resolveModel(ref, { models: config.models, env: io.env });
  try {
    running = await startGateway(startOptions(io, setup, resolve, stop.signal));
  } catch (error) {
    return failedStart(io, config, stop.signal, error);
  }
  await printListening(io, setup, running);
  await stopped;
  out(io, "stopping...");
  await running.close();
}

/** `switchboard gateway run|call`. */
export function registerGatewayCommand(program: Command, io: CliIo, signals: CliSignals): void {
  const gateway = program.command("gateway").description("run the gateway or call one of its methods");

  gateway
    .command("run")
    .description("run the gateway in the foreground (Ctrl-C stops it)")
    .option("--port <port>", "port (default gateway.port, 18789)")
    .action(async (flags: { port?: string }, cmd: Command) =>
      runGateway(io, signals, await runSetup(io, signals, flags, cmd.optsWithGlobals().config)),
    );

  gateway
    .command("call <method>")
    .description("call a gateway method and print the JSON result")
    .option("--params <json>", "method params as JSON", "{}")
    .option("--url <url>", "gateway URL (default: the one this home's gateway.lock names)")
    .option("--token <token>", "gateway token (default $SWITCHBOARD_GATEWAY_TOKEN or gateway.auth.token)")
    .action(async (method: string, flags: { params: string; url?: string; token?: string }, cmd: Command) => {
      const params = parseJsonFlag(io, "params", flags.params);
      const client = await connectCli(io, cmd.optsWithGlobals().config, flags);
      try {
        printJson(io, await client.call(method, params));
      } finally {
        await client.close();
      }
    });
}
