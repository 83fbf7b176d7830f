import { type ResolvedModel, routeSdkWarnings } from "../agents/models/index.js";
import type { CommandDispatcher } from "../commands/command-dispatcher.js";
import type { Config } from "../config/schema/index.js";
import type { ChannelAdapter } from "../delivery/channel-adapter.js";
import { ConfigError, ErrorCodes } from "../errors.js";
import type { Logger } from "../logger.js";
import { InboxWriteError } from "../inbound/inbox.js";
import { sharedDmWarning } from "../inbound/account-overview.js";
import { createEventHub } from "./event-hub.js";
import { type GatewayCore, type GatewayCoreDeps, createGatewayCore } from "./gateway-core.js";
import { type ConnectionLimits, connectionBudget, openFileLimit, transcriptHandleBudget } from "./connection-limits.js";
import { createGatewayCluster } from "./core-cluster.js";
import { acquireGatewayLock } from "./gateway-lock.js";
import { type GatewayServer, isLoopback, listenGateway } from "./gateway-server.js";
import { type GatewayMetrics, createGatewayMetrics } from "./metrics/gateway-metrics.js";

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
}

/** A running gateway. */
export interface RunningGateway {
  url: string;
  port: number;
  core: GatewayCore;
  /** Stops accepting, drains lanes, flushes state, releases the lock. */
  close(): Promise<void>;
}

/**
 * Starts the gateway: refuses a non-loopback bind without a token, takes the home's lock (a
 * second gateway on the same home fails naming the holder), opens state, listens, starts adapters.
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
  const lock = await acquireGatewayLock(options.home, { port });
  let core: GatewayCore | undefined;
  let server: GatewayServer | undefined;
  try {
    const events = createEventHub();
    const metrics = options.metrics ?? createGatewayMetrics(options.now ? { now: options.now } : {});
    const fileLimit = openFileLimit();
    const transcriptHandles = transcriptHandleBudget(fileLimit);
    core = await createGatewayCore({
      ...options,
      events,
      metrics,
      transcriptHandles,
      cluster: createGatewayCluster({ config, logger, port }),
      ...(options.now && { now: options.now }),
    });
    server = await listenGateway(core, events, {
      host,
      port,
      allowedOrigins: config.gateway.allowedOrigins,
      allowedHosts: config.gateway.allowedHosts,
      trustedProxies: config.gateway.trustedProxies,
      relaySecret: () => core?.cluster?.relaySecret(),
      limits: { maxConnections: connectionBudget(fileLimit), ...options.connectionLimits },
      ...(token && { token }),
    });
    await lock.listening({ port: server.port, url: server.url });
    await core.cluster?.listening(server.port);
    const started = core;
    await core.start((adapter) => async (message, interaction) => {
      // Stopping: not stored, so the platform resends it to the next start (Telegram, WhatsApp).
      if (!started.acceptsInbound()) throw new InboxWriteError(new Error("the gateway is stopping"));
      let accepted: Awaited<ReturnType<typeof started.pipeline.accept>>;
      try {
        accepted = await started.pipeline.accept(message, interaction ? { interaction } : {});
      } catch (err) {
        // Not stored: the adapter must not acknowledge it, so the platform delivers it again.
        if (err instanceof InboxWriteError) throw err;
        // Not an inbound message at all: redelivery cannot help, so it is logged and acknowledged.
        return void logger.warn({ channel: adapter.id, err }, "inbound message refused");
      }
      // Stored: handling goes on without holding up the platform; a failure is logged by the pipeline.
      accepted.result.then(
        (result) => logger.debug({ channel: adapter.id, status: result.status }, "inbound handled"),
        () => undefined,
      );
    });
    logger.info({ url: server.url, home: options.home }, "gateway listening");
    const warning = sharedDmWarning(config);
    if (warning)
      logger.warn(
        { dmScope: config.session.dmScope, hint: warning },
        "several people may DM the bot and share one session",
      );
    const listening = server;
    return {
      url: listening.url,
      port: listening.port,
      core: started,
      async close() {
        // Readiness fails at once and the probes keep answering (503) while the turns drain.
        started.readiness.draining();
        await listening.drain();
        await started.stop();
        await listening.close();
        await lock.release();
      },
    };
  } catch (err) {
    // An adapter that fails to start (a rejected token) must not leave the port or state open.
    await server?.close().catch(() => undefined);
    await core?.stop(0).catch(() => undefined);
    await lock.release();
    throw err;
  }
}
