import type http from "node:http";
import { routeSdkWarnings } from "../agents/models/index.js";
import { ConfigError, ErrorCodes } from "../errors.js";
import { sharedDmWarning } from "../inbound/account-overview.js";
import { DEFAULT_CONNECTION_LIMITS } from "./connection-limits.js";
import { createGatewayCluster } from "./core-cluster.js";
import { type GatewayCore, createGatewayCore } from "./gateway-core.js";
import { acquireGatewayLock } from "./gateway-lock.js";
import { type GatewayServer, isLoopback, listenGateway } from "./gateway-server.js";
import { type Standby, openHttpServer } from "./standby-server.js";
import { startMany } from "./start-many.js";
import {
  type RunningGateway,
  type StartGatewayOptions,
  coreParts,
  inboundSink,
  listenOptions,
  standbyOn,
} from "./start-parts.js";
import { type StartupSteps, createStartupSteps } from "./startup-steps.js";

export type { RunningGateway, StartGatewayOptions } from "./start-parts.js";

/** Starts the core's adapters and work on a listening server; the gateway it returns stops in order. */
async function launch(
  options: StartGatewayOptions,
  core: GatewayCore,
  server: GatewayServer,
  release: () => Promise<void>,
  steps: StartupSteps,
): Promise<RunningGateway> {
  const { config, logger } = options;
  await core.start(inboundSink(core, logger));
  logger.info({ url: server.url, home: options.home, startupMs: steps.report() }, "gateway listening");
  const warning = sharedDmWarning(config);
  if (warning)
    logger.warn(
      { dmScope: config.session.dmScope, hint: warning },
      "several people may DM the bot and share one session",
    );
  return {
    url: server.url,
    port: server.port,
    core,
    async close() {
      // Readiness fails at once and the probes keep answering (503) while the turns drain.
      core.readiness.draining();
      await server.drain();
      await core.stop();
      await server.close();
      await release();
    },
  };
}

/** The local backend: the home's lock (a second gateway on it fails naming the holder), the core, then the server. */
async function startLocal(options: StartGatewayOptions, token: string | undefined, port: number) {
  const lock = await acquireGatewayLock(options.home, { port });
  const parts = coreParts(options);
  const steps = createStartupSteps();
  let core: GatewayCore | undefined;
  let server: GatewayServer | undefined;
  try {
    core = await createGatewayCore({
      ...options,
      ...parts,
      steps,
      cluster: createGatewayCluster({ config: options.config, logger: options.logger, port }),
    });
    server = await listenGateway(core, parts.events, listenOptions(options, parts, token, port));
    await lock.listening({ port: server.port, url: server.url });
    steps.mark("listen");
    return await launch(options, core, server, () => lock.release(), steps);
  } catch (err) {
    // An adapter that fails to start (a rejected token) must not leave the port or state open.
    await server?.close().catch(() => undefined);
    await core?.stop(0).catch(() => undefined);
    await lock.release();
    throw err;
  }
}

/**
 * PostgreSQL: listens first, as a standby, then joins; the core (and its state, fenced) opens once
 * this gateway holds the schema's writer lease (at once, or when the owner goes), and the server
 * switches from the standby's front to the owner's routes.
 */
async function startOnPostgres(options: StartGatewayOptions, token: string | undefined, port: number) {
  // The home's lock still names this gateway's port: the CLI of this home finds it there.
  const lock = await acquireGatewayLock(options.home, { port });
  const parts = coreParts(options);
  const listen = listenOptions(options, parts, token, port);
  let server: http.Server | undefined;
  let standby: Standby | undefined;
  let core: GatewayCore | undefined;
  let listening: GatewayServer | undefined;
  try {
    const { maxConnections } = { ...DEFAULT_CONNECTION_LIMITS, ...listen.limits };
    server = await openHttpServer(listen.host, port, { maxConnections, logger: options.logger });
    const opened = standbyOn(server, options, listen, (at) =>
      createGatewayCluster({
        config: options.config,
        logger: options.logger,
        ...at,
        ...(options.signal && { signal: options.signal }),
      }),
    );
    standby = opened.standby;
    await lock.listening({ port: opened.port, url: opened.url });
    // Timed from the writer lease on: what follows it is a takeover's outage.
    const steps = createStartupSteps();
    const cluster = {
      ...opened.cluster,
      guard: (db: Parameters<typeof opened.cluster.guard>[0]) =>
        opened.cluster.guard(db).finally(() => steps.mark("writerLease")),
    };
    core = await createGatewayCore({ ...options, ...parts, cluster, steps });
    const relaySecret = await opened.cluster.relaySecret();
    // The owner's routes take the server in the same synchronous step as the standby lets go of it
    // (listenGateway attaches its listeners before its first await when given a server): a request
    // arriving in between would find no listener and never be answered.
    const frontClosed = standby.close();
    listening = await listenGateway(core, parts.events, { ...listen, server, relaySecret });
    await frontClosed;
    steps.mark("listen");
    return await launch(options, core, listening, () => lock.release(), steps);
  } catch (err) {
    await standby?.close().catch(() => undefined);
    const closing = listening?.close() ?? (server && new Promise<void>((resolve) => server!.close(() => resolve())));
    await closing?.catch(() => undefined);
    await core?.stop(0).catch(() => undefined);
    await lock.release();
    throw err;
  }
}

/**
 * Starts the gateway: refuses a non-loopback bind without a token; on the local backend takes the
 * home's lock (a second gateway on the same home fails naming the holder); on PostgreSQL serves as
 * a standby until it owns the schema. Then opens state, listens and starts the adapters.
 */
export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const { config, logger } = options;
  const host = config.gateway.bind;
  const token = options.token ?? config.gateway.auth.token;
  if (!isLoopback(host) && !token) {
    throw new ConfigError(
      ErrorCodes.CONFIG_INVALID,
      `gateway.bind is ${host}, which is reachable from other machines: set gateway.auth.token (or SWITCHBOARD_GATEWAY_TOKEN), or bind to 127.0.0.1`,
    );
  }
  const port = options.port ?? config.gateway.port;
  routeSdkWarnings(logger);
  if (config.state.backend === "local") return startLocal(options, token, port);
  return config.cluster.owners === "many" ? startMany(options, token, port) : startOnPostgres(options, token, port);
}
