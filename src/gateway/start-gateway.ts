import type http from "node:http";
import type { AddressInfo } from "node:net";
import { type ResolvedModel, routeSdkWarnings } from "../agents/models/index.js";
import type { CommandDispatcher } from "../commands/command-dispatcher.js";
import type { Config } from "../config/schema/index.js";
import type { ChannelAdapter } from "../delivery/channel-adapter.js";
import { ConfigError, ErrorCodes } from "../errors.js";
import type { Logger } from "../logger.js";
import { handlingGoesOn } from "../inbound/handle-inbound.js";
import { InboxWriteError } from "../inbound/inbox.js";
import { sharedDmWarning } from "../inbound/account-overview.js";
import { createEventHub } from "./event-hub.js";
import { type GatewayCore, type GatewayCoreDeps, createGatewayCore } from "./gateway-core.js";
import {
  type ConnectionLimits,
  DEFAULT_CONNECTION_LIMITS,
  connectionBudget,
  openFileLimit,
  transcriptHandleBudget,
} from "./connection-limits.js";
import { createGatewayCluster } from "./core-cluster.js";
import { acquireGatewayLock } from "./gateway-lock.js";
import { type GatewayServer, type ListenOptions, isLoopback, listenGateway } from "./gateway-server.js";
import { joinHostPort } from "./host-port.js";
import { type GatewayMetrics, createGatewayMetrics } from "./metrics/gateway-metrics.js";
import { createOwnerRelay } from "./owner-relay.js";
import type { OwnerAddress, StandbyFrontFactory } from "./standby-front.js";
import { standbyParts } from "./standby-parts.js";
import { type Standby, openHttpServer, serveStandby } from "./standby-server.js";
import { type StartupSteps, createStartupSteps } from "./startup-steps.js";
import { createTokenGuard } from "./token-guard.js";

/** What {@link startGateway} needs; the CLI fills it from flags, env and config. */
export interface StartGatewayOptions {
  config: Config;
  home: string;
  homeDir: string;
  logger: Logger;
  resolveModel: (ref: string) => ResolvedModel;
  /** overrides `gateway.port` (0 = any free port) */
  port?: number;
  /** overrides `gateway.auth.token` */
  token?: string;
  adapters?: ChannelAdapter[];
  commands?: CommandDispatcher;
  tools?: GatewayCoreDeps["tools"];
  retry?: GatewayCoreDeps["retry"];
  chatTurnsAtOnce?: GatewayCoreDeps["chatTurnsAtOnce"];
  timers?: GatewayCoreDeps["timers"];
  /** the metrics registry `GET /metrics` serves; default a new one for this gateway */
  metrics?: GatewayMetrics;
  now?: () => number;
  /** where SWITCHBOARD_DATABASE_URL is read (`state.backend: "postgres"`); default none */
  env?: GatewayCoreDeps["env"];
  /** default: `DEFAULT_CONNECTION_LIMITS`, with `maxConnections` from the descriptor limit */
  connectionLimits?: Partial<ConnectionLimits>;
  /** on PostgreSQL: this gateway listens as a standby of `owner` (it owns the schema once `startGateway` resolves) */
  onStandby?: (standby: { url: string; port: number; owner: OwnerAddress }) => void;
  /** a stop while a standby: the gateway leaves its cluster and `startGateway` rejects (UNAVAILABLE) */
  signal?: AbortSignal;
  /** what a standby serves besides its probes; default {@link createOwnerRelay} (everything relayed to the owner) */
  standbyFront?: StandbyFrontFactory;
}

/** A running gateway. */
export interface RunningGateway {
  url: string;
  port: number;
  core: GatewayCore;
  /** Stops accepting, drains lanes, flushes state, releases the lock. */
  close(): Promise<void>;
}

/** The parts every gateway builds before its core, on either backend. */
function coreParts(options: StartGatewayOptions) {
  const fileLimit = openFileLimit();
  return {
    events: createEventHub(),
    metrics: options.metrics ?? createGatewayMetrics(options.now ? { now: options.now } : {}),
    transcriptHandles: transcriptHandleBudget(fileLimit),
    fileLimit,
  };
}

type Parts = ReturnType<typeof coreParts>;

/** Where and how the gateway's server listens, and whom it lets in. */
function listenOptions(
  options: StartGatewayOptions,
  parts: Parts,
  token: string | undefined,
  port: number,
): ListenOptions {
  const { config } = options;
  return {
    host: config.gateway.bind,
    port,
    allowedOrigins: config.gateway.allowedOrigins,
    allowedHosts: config.gateway.allowedHosts,
    trustedProxies: config.gateway.trustedProxies,
    limits: { maxConnections: connectionBudget(parts.fileLimit), ...options.connectionLimits },
    ...(token && { token }),
  };
}

/** What the adapters hand their inbound messages to: stored in the inbox before the platform is acknowledged. */
function inboundSink(core: GatewayCore, logger: Logger) {
  return (adapter: ChannelAdapter) =>
    async (...[message, interaction]: Parameters<ReturnType<Parameters<GatewayCore["start"]>[0]>>) => {
      // Stopping: not stored, so the platform resends it to the next start (Telegram, WhatsApp).
      if (!core.acceptsInbound()) throw new InboxWriteError(new Error("the gateway is stopping"));
      let accepted: Awaited<ReturnType<typeof core.pipeline.accept>>;
      try {
        accepted = await core.pipeline.accept(message, interaction ? { interaction } : {});
      } catch (err) {
        // Not stored: the adapter must not acknowledge it, so the platform delivers it again.
        if (err instanceof InboxWriteError) throw err;
        // Not an inbound message at all: redelivery cannot help, so it is logged and acknowledged.
        return void logger.warn({ channel: adapter.id, err }, "inbound message refused");
      }
      // Stored: handling goes on without holding up the platform; a failure is logged by the pipeline.
      handlingGoesOn(accepted, (status) => logger.debug({ channel: adapter.id, status }, "inbound handled"));
    };
}

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

/** The standby's server: its own edge checks, the front, and the owner as the cluster finds it. */
function standbyOn(server: http.Server, options: StartGatewayOptions, listen: ListenOptions) {
  const guard = createTokenGuard({
    token: listen.token,
    trustedProxies: listen.trustedProxies ?? [],
    now: options.now ?? Date.now,
  });
  const policy = {
    token: listen.token,
    allowedOrigins: listen.allowedOrigins ?? [],
    allowedHosts: listen.allowedHosts ?? [],
  };
  const port = (server.address() as AddressInfo).port;
  const url = `ws://${joinHostPort(listen.host, port)}`;
  let standby: Standby | undefined;
  const cluster = createGatewayCluster({
    config: options.config,
    logger: options.logger,
    port,
    ...(options.signal && { signal: options.signal }),
    onStandby(owner) {
      standby?.ownerIs(owner);
      options.onStandby?.({ url, port, owner });
    },
  });
  const { front, reads } = standbyParts(options.standbyFront ?? createOwnerRelay, { ...options, cluster });
  standby = serveStandby(server, {
    reads,
    logger: options.logger,
    readOwner: cluster.owner,
    relaySecret: cluster.relaySecret,
    policy,
    guard,
    front,
    timing: { leaseTtlMs: options.config.cluster.leaseTtlMs, heartbeatMs: options.config.cluster.heartbeatMs },
  });
  return { cluster, standby, port, url };
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
    const opened = standbyOn(server, options, listen);
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
  return config.state.backend === "postgres" ? startOnPostgres(options, token, port) : startLocal(options, token, port);
}
