import os from "node:os";
import type { Command } from "commander";
import { isSwitchboardError } from "../errors.js";
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

/** `switchboard gateway run|call`. */
export function registerGatewayCommand(program: Command, io: CliIo, signals: CliSignals): void {
  const gateway = program.command("gateway").description("run the gateway or call one of its methods");

  gateway
    .command("run")
    .description("run the gateway in the foreground (Ctrl-C stops it)")
    .option("--port <port>", "port (default gateway.port, 18789)")
    .action(async (flags: { port?: string }, cmd: Command) => {
      const configFlag = cmd.optsWithGlobals().config;
      const loaded = await loadCliConfig(io, configFlag);
      const { config } = loaded;
      const paths = cliPaths(io, configFlag);
      const logger = createCliLogger(io, config.logging.level);
      // One request's failure must not stop the gateway: log the whole error and keep serving.
      signals.onUnexpected?.((error) => logger.error({ err: error }, "unhandled rejection"));
      const port = flags.port === undefined ? undefined : Number(flags.port);
      if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) {
        err(io, `--port must be a port number, got "${flags.port}"`);
        throw new CliExit(ExitCode.badInput);
      }
      const homeDir = io.homeDir ?? os.homedir();
      const adapters = (await io.channelAdapters?.(config, { home: paths.home, homeDir, env: io.env, logger })) ?? [];
      // Loaded here, not at the top: every other command starts without the gateway and the ai SDK.
      const { startGateway } = await import("../gateway/start-gateway.js");
      const { resolveModel } = await import("../agents/models/index.js");
      // Registered before the start: a standby (PostgreSQL) may be stopped while it waits to own its schema.
      const stop = new AbortController();
      const stopped = new Promise<void>((resolve) => signals.onStop(() => resolve(stop.abort())));
      let running: Awaited<ReturnType<typeof startGateway>>;
      try {
        running = await startGateway({
          config,
          home: paths.home,
          homeDir,
          logger,
          adapters,
          resolveModel: (ref) => resolveModel(ref, { models: config.models, env: io.env }),
          env: io.env,
          ...(port !== undefined && { port }),
          ...(io.env.SWITCHBOARD_GATEWAY_TOKEN && { token: io.env.SWITCHBOARD_GATEWAY_TOKEN }),
          signal: stop.signal,
          onStandby: ({ url, owner }) =>
            out(
              io,
              `Switchboard gateway listening on ${url} as a standby: the owner is ${owner.nodeId} at ${owner.address}; this one takes over when it goes`,
            ),
        });
      } catch (error) {
        if (stop.signal.aborted && config.state.backend === "postgres") {
          // The stop ends the wait of a standby; anything else that failed meanwhile is still said.
          if (!isSwitchboardError(error) || error.code !== "UNAVAILABLE")
            err(io, `while stopping: ${(error as Error).message}`);
          return out(io, "stopped before it owned the schema (a standby, or still starting)");
        }
        if (!isSwitchboardError(error) && (error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
        err(io, `gateway not started: ${(error as Error).message}`);
        throw new CliExit(ExitCode.failure);
      }
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
      out(io, `  state:         ${paths.home}`);
      const { sharedDmWarning } = await import("../inbound/account-overview.js"); // loaded with the command, not at start (src/cli/main.ts)
      const warning = sharedDmWarning(config);
      if (warning) err(io, `\nwarning: ${warning}\n`);
      await stopped;
      out(io, "stopping...");
      await running.close();
    });

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
