// A gateway with `cluster.owners: "many"` (docs/scale-out.md "N owners", step 7, being built): it
// listens first (its front relays clients to the global holder, as a standby's does), joins, takes
// its share of the partitions and opens a partition core for them. In the background it waits for
// the writer lease; holding it, it reopens as the global core (its partitions, the channel accounts,
// cron, sweeps) and serves the clients itself. `startGateway` resolves then, as a standby's does on
// its takeover. A change of the held set reopens the core (./many-cores.ts).
import { bridgeEvents } from "../cluster/event-bridge.js";
import { createPeerCall } from "../cluster/peer-call.js";
import { type PartitionShare, createPartitionShare } from "../cluster/partition-share.js";
import { databaseTarget } from "../config/database-url.js";
import { ConfigError, ErrorCodes } from "../errors.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import { openPostgresDatabase } from "../state/postgres/database.js";
import { DEFAULT_CONNECTION_LIMITS } from "./connection-limits.js";
import { StandbyStoppedError } from "./core-cluster.js";
import { acquireGatewayLock } from "./gateway-lock.js";
import { type ListenOptions, listenGateway } from "./gateway-server.js";
import { type ManyCluster, createManyCluster } from "./many-cluster.js";
import { coreSlot } from "./many-cores.js";
import { createOwnerRelay } from "./owner-relay.js";
import { withPeerCalls } from "./peer-front.js";
import { createPeerHandlers } from "./peer-handlers.js";
import type { GaugeSources } from "./metrics/metric-gauges.js";
import type { GatewayMetrics } from "./metrics/gateway-metrics.js";
import { openHttpServer } from "./standby-server.js";
import {
  type Parts,
  type RunningGateway,
  type StartGatewayOptions,
  coreParts,
  listenOptions,
  standbyOn,
} from "./start-parts.js";

/** The schema's database, opened once and joined (the member's fenced database: its close leaves the cluster). */
async function joinedDatabase(options: StartGatewayOptions, cluster: ManyCluster): Promise<PostgresDatabase> {
  const target = databaseTarget(options.config.state, options.env ?? {});
  if ("problem" in target) throw new ConfigError(ErrorCodes.CONFIG_INVALID, target.problem);
  const opened = await openPostgresDatabase({ ...target, logger: options.logger });
  return cluster.guard(opened).catch(async (err: unknown) => {
    await opened.close();
    throw err;
  });
}

/**
 * The metrics registry, its gauges registered once and read from the cores open now (cores come and
 * go): each role's latest core (`mover`: the one holding the partitions; `front`: the global core
 * opened beside it, ./many-cores.ts), summed.
 */
function rewatchable(metrics: GatewayMetrics) {
  const sources = new Map<string, GaugeSources>();
  const all = () => [...sources.values()];
  const primary = () => sources.get("front") ?? sources.get("mover");
  const through: GaugeSources = {
    outboxPending: () => all().flatMap((s) => s.outboxPending()),
    inboxPending: () => all().reduce((sum, s) => sum + s.inboxPending(), 0),
    lanes: () => all().flatMap((s) => s.lanes()),
    chatSlots: () =>
      all().reduce(
        (sum, s) => {
          const slots = s.chatSlots();
          return { held: sum.held + slots.held, waiting: sum.waiting + slots.waiting };
        },
        { held: 0, waiting: 0 },
      ),
    // MCP servers of the core running turns; the accounts of the one receiving (each listed once).
    mcp: () => (sources.get("mover") ?? primary())?.mcp() ?? [],
    accounts: () => primary()?.accounts() ?? [],
    now: () => primary()?.now() ?? Date.now(),
  };
  return (role: "mover" | "front"): GatewayMetrics => ({
    ...metrics,
    watch(next) {
      if (sources.size === 0) metrics.watch(through);
      sources.set(role, next);
    },
  });
}

/** Everything a start opened so far, closed in order on a failure or a stop while waiting. */
interface Opened {
  slot?: ReturnType<typeof coreSlot>;
  /** session events across gateways (src/cluster/event-bridge.ts): a client of any gateway sees every turn's */
  bridge?: { stop(): Promise<void> };
  share?: PartitionShare;
  database?: PostgresDatabase;
  closeServer?: () => Promise<void>;
}

async function closeOpened(opened: Opened): Promise<void> {
  await opened.share?.stop().catch(() => undefined);
  await opened.slot?.close().catch(() => undefined);
  await opened.bridge?.stop().catch(() => undefined);
  await opened.closeServer?.().catch(() => undefined);
  await opened.database?.close().catch(() => undefined);
}

/** The share of the partitions, on the member: its cores follow it (a release waits for the core's stop). */
function shareOf(options: StartGatewayOptions, cluster: ManyCluster, database: PostgresDatabase, slot: Opened["slot"]) {
  const { leaseTtlMs, heartbeatMs } = options.config.cluster;
  const share = createPartitionShare({
    node: cluster.node(),
    pool: database.pool,
    count: database.partitions,
    leaseTtlMs,
    heartbeatMs,
    logger: options.logger,
    // The partitions given back are moved out of the running core (./core-holding.ts); idle ones go first.
    beforeRelease: (parts) => slot!.release(parts),
    busy: () => slot!.busy(),
    // A core that cannot open: the gateway stops (its partitions go to its peers), the cause logged;
    // the share would otherwise keep the partitions with no core to serve them.
    onChange: (held) => slot!.open(held).catch(fatal(options)),
  });
  cluster.heldBy(share.held);
  return { share, start: () => share.start() };
}

function fatal(options: StartGatewayOptions) {
  return (err: unknown) => {
    options.logger.error({ err }, "this gateway could not open its core for its partitions; stopping now");
    process.exit(1);
  };
}

/**
 * The server, listening first with the standby's front (it relays clients to the global holder, and
 * answers peer calls from this gateway's core: ./peer-front.ts).
 */
async function listenFirst(options: StartGatewayOptions, at: { listen: ListenOptions; port: number; opened: Opened }) {
  const { listen, port, opened } = at;
  const { maxConnections } = { ...DEFAULT_CONNECTION_LIMITS, ...listen.limits };
  const server = await openHttpServer(listen.host, port, { maxConnections, logger: options.logger });
  opened.closeServer = () => new Promise<void>((resolve) => server.close(() => resolve()));
  const handlers = createPeerHandlers();
  let nodeId = "";
  const standbyFront = withPeerCalls(options.standbyFront ?? createOwnerRelay, { handlers, nodeId: () => nodeId });
  const front = standbyOn(server, { ...options, standbyFront }, listen, (where) => {
    const cluster = createManyCluster({
      config: options.config,
      logger: options.logger,
      ...where,
      ...(options.signal && { signal: options.signal }),
    });
    nodeId = cluster.nodeId;
    return cluster;
  });
  return { server, front, handlers };
}

/** The member's core slot on its server, and the share it follows; the event bridge for the process's life. */
async function openMember(
  options: StartGatewayOptions,
  at: { listen: ListenOptions; parts: Parts; opened: Opened },
  first: Awaited<ReturnType<typeof listenFirst>>,
) {
  const { cluster } = first.front;
  const { parts, opened } = at;
  const database = await joinedDatabase(options, cluster);
  opened.database = database;
  const { pool, schema } = database;
  opened.bridge = bridgeEvents({
    pool,
    schema,
    nodeId: cluster.nodeId,
    hub: parts.events,
    logger: options.logger,
    // A paused gateway, continued, publishes no turn's events before its heartbeat stops it.
    mayPublish: () => cluster.leasesYoung(),
  });
  const relaySecret = await cluster.relaySecret();
  const { handlers } = first;
  const listen = { ...at.listen, server: first.server, relaySecret, peer: { handlers, nodeId: cluster.nodeId } };
  const call = createPeerCall({ relaySecret: async () => relaySecret });
  const slot = coreSlot({
    options,
    parts,
    metricsOf: rewatchable(parts.metrics),
    cluster,
    database,
    standby: first.front.standby,
    serveStandby: first.front.serve,
    listen: (core) => listenGateway(core, parts.events, listen),
    peer: { handlers, call },
  });
  opened.slot = slot;
  const share = shareOf(options, cluster, database, slot);
  opened.share = share.share;
  return { cluster, slot, share };
}

/** Starts a gateway of `cluster.owners: "many"`; resolves once it is the global holder. */
export async function startMany(
  options: StartGatewayOptions,
  token: string | undefined,
  port: number,
): Promise<RunningGateway> {
  const lock = await acquireGatewayLock(options.home, { port });
  const parts = coreParts(options);
  const listen = listenOptions(options, parts, token, port);
  const opened: Opened = {};
  try {
    const first = await listenFirst(options, { listen, port, opened });
    await lock.listening({ port: first.front.port, url: first.front.url });
    const { cluster, slot, share } = await openMember(options, { listen, parts, opened }, first);
    // A cold start (the writer lease free) opens the global core at once, not a partition core first.
    const globalFirst = await cluster.tryGlobal();
    await share.start();
    await cluster.takeGlobal();
    if (!globalFirst) await slot.open(share.share.held());
    options.logger.info({ url: first.front.url, home: options.home }, "gateway listening");
    return running(first.front, opened, () => lock.release());
  } catch (err) {
    await closeOpened(opened);
    await lock.release();
    throw options.signal?.aborted ? new StandbyStoppedError() : err;
  }
}
/** The running global holder: its core is the one open now; its stop closes everything in order. */
function running(at: { url: string; port: number }, opened: Opened, release: () => Promise<void>): RunningGateway {
  return {
    url: at.url,
    port: at.port,
    get core() {
      const core = opened.slot!.core();
      if (!core) throw new Error("the gateway is between two cores");
      return core;
    },
    idle: () => opened.slot!.idle(),
    async close() {
      await opened.share?.stop();
      await opened.slot?.close();
      await opened.bridge?.stop();
      await opened.database?.close();
      await release();
    },
  };
}
