// What both ways of starting a gateway share (./start-gateway.ts: the local backend and one owner
// on PostgreSQL; ./start-many.ts: `cluster.owners: "many"`): the options, the parts built before a
// core, the server's listen options, the adapters' sink and the standby's front.
import type http from "node:http";
import type { AddressInfo } from "node:net";
import type { ResolvedModel } from "../agents/models/index.js";
import type { CommandDispatcher } from "../commands/command-dispatcher.js";
import type { Config } from "../config/schema/index.js";
import type { ChannelAdapter } from "../delivery/channel-adapter.js";
import { handlingGoesOn } from "../inbound/handle-inbound.js";
import { InboxWriteError } from "../inbound/inbox.js";
import type { Logger } from "../logger.js";
import { type ConnectionLimits, connectionBudget, openFileLimit, transcriptHandleBudget } from "./connection-limits.js";
import type { GatewayCluster } from "./core-cluster.js";
import { createEventHub } from "./event-hub.js";
import type { GatewayCore, GatewayCoreDeps } from "./gateway-core.js";
import type { ListenOptions } from "./gateway-server.js";
import { joinHostPort } from "./host-port.js";
import { type GatewayMetrics, createGatewayMetrics } from "./metrics/gateway-metrics.js";
import { createOwnerRelay } from "./owner-relay.js";
import type { OwnerAddress, StandbyFrontFactory } from "./standby-front.js";
import { standbyParts } from "./standby-parts.js";
import { type Standby, serveStandby } from "./standby-server.js";
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
  /** Settles once every core of the gateway is idle (`cluster.owners: "many"` may run two: ./many-cores.ts); default `core.idle()` */
  idle?(): Promise<void>;
  /** Stops accepting, drains lanes, flushes state, releases the lock. */
  close(): Promise<void>;
}

/** The parts every gateway builds before its core, on either backend. */
export function coreParts(options: StartGatewayOptions) {
  const fileLimit = openFileLimit();
  return {
    events: createEventHub(),
    metrics: options.metrics ?? createGatewayMetrics(options.now ? { now: options.now } : {}),
    transcriptHandles: transcriptHandleBudget(fileLimit),
    fileLimit,
  };
}

export type Parts = ReturnType<typeof coreParts>;

/** Where and how the gateway's server listens, and whom it lets in. */
export function listenOptions(
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
export function inboundSink(core: GatewayCore, logger: Logger) {
  return (adapter: ChannelAdapter) =>
    async (...[message, interaction]: Parameters<ReturnType<Parameters<GatewayCore["start"]>[0]>>) => {
      // A stop drains: stored, not handled (the next start replays it); a native command's interaction
      // ends with the process, so it is refused then, as is anything once the adapters stopped.
      const intake = core.intake();
      if (intake === "refuse" || (intake === "store" && interaction))
        throw new InboxWriteError(new Error("the gateway is stopping"));
      let accepted: Awaited<ReturnType<typeof core.pipeline.accept>>;
      // `cluster.owners: "many"`: entries forwarded to a partition before this gateway held it are stored first (order kept).
      if (core.partial) await core.beforeOwnInbound?.();
      try {
        accepted = await core.pipeline.accept(message, {
          ...(interaction && { interaction }),
          ...(intake === "store" && { storeOnly: true }),
        });
      } catch (err) {
        // Not stored: the adapter must not acknowledge it, so the platform delivers it again.
        if (err instanceof InboxWriteError) throw err;
        // Not an inbound message at all: redelivery cannot help, so it is logged and acknowledged.
        return void logger.warn({ channel: adapter.id, err }, "inbound message refused");
      }
      // Stored: handling goes on without holding up the platform; a failure is logged by the pipeline.
      handlingGoesOn(accepted, (status) =>
        status === "stored"
          ? logger.info(
              { channel: adapter.id },
              "inbound message stored while the core stops; its next start replays it",
            )
          : logger.debug({ channel: adapter.id, status }, "inbound handled"),
      );
    };
}

/** Where a standby listens, for the cluster it serves: its port, and what it does on learning the owner. */
export interface StandbyAt {
  port: number;
  onStandby(owner: OwnerAddress): void;
}

/** The standby's own edge checks (Host, Origin, token). */
function standbyEdge(options: StartGatewayOptions, listen: ListenOptions) {
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
  return { guard, policy };
}

/**
 * The standby's server: its own edge checks, the front, and the owner as the cluster (`makeCluster`)
 * finds it. `serve()` serves it again (a gateway of `cluster.owners: "many"` between two cores).
 */
export function standbyOn<C extends GatewayCluster>(
  server: http.Server,
  options: StartGatewayOptions,
  listen: ListenOptions,
  makeCluster: (at: StandbyAt) => C,
) {
  const edge = standbyEdge(options, listen);
  const port = (server.address() as AddressInfo).port;
  const url = `ws://${joinHostPort(listen.host, port)}`;
  let standby: Standby | undefined;
  const cluster = makeCluster({
    port,
    onStandby(owner) {
      standby?.ownerIs(owner);
      options.onStandby?.({ url, port, owner });
    },
  });
  const serve = () => {
    const { front, reads } = standbyParts(options.standbyFront ?? createOwnerRelay, { ...options, cluster });
    const { leaseTtlMs, heartbeatMs } = options.config.cluster;
    standby = serveStandby(server, {
      ...edge,
      reads,
      logger: options.logger,
      readOwner: cluster.owner,
      relaySecret: cluster.relaySecret,
      front,
      timing: { leaseTtlMs, heartbeatMs },
    });
    return standby;
  };
  return { cluster, standby: serve(), serve, port, url };
}
