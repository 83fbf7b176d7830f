import type { ToolContext } from "../agents/agent-runtime.js";
import { type ResolvedModel, resolveAlias } from "../agents/models/index.js";
import type { CommandDispatcher } from "../commands/command-dispatcher.js";
import type { Config } from "../config/schema/index.js";
import type { ChannelAdapter } from "../delivery/channel-adapter.js";
import type { DeliveryGateDeps } from "../delivery/index.js";
import type { Logger } from "../logger.js";
import type { OpenTranscripts } from "../sessions/agent-sessions.js";
import { entryDeliveryContext } from "../sessions/delivery-context.js";
import { PRUNABLE_KINDS, retentionPlan } from "../sessions/retention/retention-plan.js";
import {
  type RetentionSweeperDeps,
  type SweepTimers,
  createRetentionSweeper,
} from "../sessions/retention/retention-sweeper.js";
import type { DeliveryContext, SessionEntry } from "../sessions/session-entry.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import type { StatePort } from "../state/state-port.js";
import { createMcpManager } from "../tools/mcp/mcp-manager.js";
import type { ToolSet } from "ai";
import { accountStates } from "./account-states.js";
import type { GatewayCluster } from "./core-cluster.js";
import type { CorePeers } from "./core-peers.js";
import { openCoreAgents } from "./core-agents.js";
import { openCoreAutomation } from "./core-automation.js";
import { channelsOf } from "./core-channels.js";
import { openCoreDelivery } from "./core-delivery.js";
import { openCoreInbound, openCoreInbox } from "./core-inbound.js";
import { createCoreKeys } from "./core-keys.js";
import { type AdapterSink, type CoreParts, DRAIN_MS, coreIntake, startCore, stopCore } from "./core-lifecycle.js";
import { coreIdle } from "./core-idle.js";
import { openStores } from "./core-stores.js";
import { type ManyCoreDeps, coreHandoff, manyWiring } from "./many-wiring.js";
import { holdingOf } from "./core-holding.js";
import type { PartialImage } from "./partial-image.js";
import type { EventHub } from "./event-hub.js";
import type { GatewayMetrics } from "./metrics/gateway-metrics.js";
import { createReadiness, readinessReport } from "./readiness.js";
import type { StartupSteps } from "./startup-steps.js";

/** Dependencies of {@link createGatewayCore}: everything from outside is injected. */
export interface GatewayCoreDeps {
  config: Config;
  /** `$SWITCHBOARD_HOME` */
  home: string;
  /** the user's home directory, for `~` in `session.store` */
  homeDir: string;
  logger: Logger;
  events: EventHub;
  /** channel adapters besides the built-in web chat */
  adapters?: ChannelAdapter[];
  resolveModel: (ref: string) => ResolvedModel;
  commands?: CommandDispatcher;
  /** replaces the session tools (tests) */
  tools?: (context: ToolContext) => ToolSet | Promise<ToolSet>;
  /** replaces fields of every account's delivery retry setting (tests shorten the delays) */
  retry?: DeliveryGateDeps["retry"];
  /** where every store keeps its table; default: where `state.backend` says ({@link openStateBackend}) */
  state?: StatePort;
  /** where SWITCHBOARD_DATABASE_URL is read (the "postgres" backend); default none */
  env?: Record<string, string | undefined>;
  /** where every agent's transcripts are kept; default the backend's (JSONL files next to the store, or PostgreSQL rows) */
  openTranscripts?: OpenTranscripts;
  /** turns answering chat messages that run at once; default 256 (tests lower it) */
  chatTurnsAtOnce?: number;
  /** transcript files each agent keeps open between appends; default 256 (`startGateway` sizes it to the descriptor limit) */
  transcriptHandles?: number;
  /** the gateway's one metrics registry (`GET /metrics`); default none: nothing is counted */
  metrics?: GatewayMetrics;
  now?: () => number;
  /** timers of the hourly retention pass; default the real ones (tests pass a manual clock's) */
  timers?: SweepTimers;
  /** the gateway's cluster membership (./core-cluster.ts): on PostgreSQL it takes the schema's writer lease before state loads */
  cluster?: GatewayCluster;
  /** times each step of the start (logged with "gateway listening"); default none */
  steps?: StartupSteps;
  /**
   * `cluster.owners: "many"`: this core's state holds only some partitions, so its methods read
   * sessions from every partition's committed rows and refuse writes of another's sessions
   * (./partial-methods.ts); default none: the image holds every session
   */
  partial?: PartialImage;
  /** `cluster.owners: "many"`: the schema's database, open for every core of the gateway (./core-stores.ts) */
  database?: PostgresDatabase;
  /** with `database`: the partitions this core holds */
  parts?: readonly number[];
  /** with `parts`: the routing's set of them, shared with whoever asks which sessions the core holds (./core-holding.ts) */
  routing?: ManyCoreDeps["routing"];
  /**
   * `cluster.owners: "many"` on a gateway not holding the writer lease (./start-many.ts): a partition
   * core, its sessions' work only: no cron, no sweeps or prunes, no pairing news, no adapters, no hand-off drain.
   */
  partitionsOnly?: boolean;
  /** `cluster.owners: "many"`: the peer call to the global holder and the process's peer handlers, lent to the adapters */
  peers?: CorePeers;
  /** with `parts`: the session tools' read of a session another gateway holds (its committed row) */
  sessionElsewhere?: (agentId: string, key: string) => Promise<SessionEntry | undefined>;
}

/** `session.retention` and `archiveRetention`, applied hourly to every agent's sessions. */
function retentionOf(
  deps: GatewayCoreDeps,
  sessions: { all(): ReturnType<RetentionSweeperDeps["agents"]> },
  now: () => number,
) {
  return createRetentionSweeper({
    agents: () => sessions.all(),
    // A partition core sweeps its own sessions; archives (whose sessions may be anywhere) are the global holder's.
    plan: retentionPlan(deps.config.session, deps.partitionsOnly ? { targets: PRUNABLE_KINDS } : {}),
    logger: deps.logger,
    now,
    ...(deps.timers && { timers: deps.timers }),
  });
}

/** What every part is opened with: the stores, the channels, the config and the session-key context. */
function coreBase(deps: GatewayCoreDeps, stores: Awaited<ReturnType<typeof openStores>>, now: () => number) {
  const { config, home, logger, events } = deps;
  const keys = createCoreKeys(config);
  return { ...stores, ...channelsOf(deps), config, home, logger, events, now, keys, routing: deps.routing };
}

/** The way out (outbox and gate) and the way in (the durable inbox), and what the later parts share. */
async function openWays(deps: GatewayCoreDeps, base: ReturnType<typeof coreBase>) {
  const delivery = await openCoreDelivery({
    ...base,
    retry: deps.retry,
    observe: base.observe.deliveries.observe,
    ...(deps.cluster && { mayStillSend: deps.cluster.mayStillSend, holdsLane: deps.cluster.holdsLane }),
    ...(deps.cluster?.laneEmptied && { laneEmptied: deps.cluster.laneEmptied }),
  });
  deps.steps?.mark("outbox");
  const forwarding = manyWiring(deps)?.forwarding;
  const stored = await openCoreInbox({ ...base, timers: deps.timers, prunes: !deps.partitionsOnly, forwarding });
  deps.steps?.mark("inbox");
  const handedOver = (id: string) => delivery.outbox.get(id) !== undefined;
  const handledRun = (runId: string) => stored.inbox.handledRun(runId);
  const mcp = createMcpManager({ config: base.config.mcp, logger: base.logger, now: base.now });
  return { ...base, ...delivery, ...stored, forwarding, handedOver, handledRun, mcp };
}

/** Opens every part in the order they depend on each other; each is opened by a `core-*` module. */
async function openParts(deps: GatewayCoreDeps) {
  const now = deps.now ?? Date.now;
  const stores = await openStores(deps, now);
  deps.steps?.mark("stateTables");
  const base = coreBase(deps, stores, now);
  const shared = await openWays(deps, base);
  // On a cluster: what other gateways stored for this owner (./handoff-drain.ts); a chat.send once the pipeline (with its metrics) is open.
  const accept = (message: unknown, options = {}) => pipeline.accept(message, options);
  const handoff = deps.cluster && coreHandoff(deps, { ...base, ...shared.turns, accept });
  const agents = await openCoreAgents({
    ...shared,
    tools: deps.tools,
    chatTurnsAtOnce: deps.chatTurnsAtOnce,
    mayStillSend: deps.cluster?.mayStillSend,
    sessionElsewhere: deps.sessionElsewhere,
  });
  const automation = await openCoreAutomation({
    ...shared,
    ...agents,
    resolveModel: deps.resolveModel,
    ...(handoff && { beforeHookStore: handoff.beforeOwnInbound }),
  });
  const tools = deps.tools ?? agents.sessionTools;
  const inbound = await openCoreInbound({ ...shared, ...agents, ...automation, tools, commands: deps.commands });
  const pipeline = stores.observe.pipeline(inbound.pipeline, base.keys.agentOfKey);
  deps.steps?.mark("agentsCronInbound");
  return {
    ...shared,
    ...agents,
    ...automation,
    ...inbound,
    pipeline,
    retention: retentionOf(deps, stores.sessions, now),
    handoff,
    readiness: createReadiness(),
    cluster: deps.cluster,
    steps: deps.steps,
    partitionsOnly: deps.partitionsOnly === true,
    peers: deps.peers,
  };
}

type Parts = Awaited<ReturnType<typeof openParts>>;

/** The parts the gateway's methods and the CLI reach through the core. */
function exposed(parts: Parts) {
  return {
    // `agentIds`, `parseKey`, `mainKeyOf`, `defaultAgentId` (and the key context they read)
    ...parts.keys,
    config: parts.config,
    home: parts.home,
    sessions: parts.sessions,
    lanes: parts.lanes,
    runs: parts.runs,
    runtime: parts.runtime,
    gate: parts.gate,
    outbox: parts.outbox,
    inbox: parts.inbox,
    adapters: parts.adapters,
    capabilitiesOf: parts.capabilitiesOf,
    /** the channel of the gateway's own clients (terminal, web chat): their messages enter the pipeline on it */
    clientChannel: parts.clientChannel,
    now: parts.now,
    logger: parts.logger,
    subagents: parts.subagents,
    toolDeps: parts.toolDeps,
    workspaceOf: parts.workspaceOf,
    cron: parts.cron,
    hooks: parts.hooks,
    /** stores a turn (hook, `agent` call, tool) in its session's inbox, then runs it; a crash replays it */
    startTurn: parts.turns.start,
    /** `session.retention` and `archiveRetention`, applied hourly; `sweep()` runs a pass now */
    retention: parts.retention,
    /** each running adapter's target codec (`<channel>:<rest>` targets of cron jobs and hooks) */
    targetsOf: parts.targetsOf,
    readiness: parts.readiness,
    /** whether the state's storage answers (PostgreSQL can be away; `/healthz` reports `degraded`) */
    storageHealth: parts.storageHealth,
    /** the gateways sharing the schema (`cluster.status`); undefined for a core built without one (tests) */
    cluster: parts.cluster,
    /** `cluster.owners: "many"`: partitions moved into and out of this running core (./core-holding.ts); undefined otherwise */
    holding: holdingOf(parts),
  };
}

/** Counts what the metrics watch (queues, lanes, slots, MCP, accounts); returns the accounts' states. */
function watchParts(parts: Parts) {
  const { readiness } = parts;
  const accounts = () => accountStates(parts.adapters.values(), parts.config, readiness.phase() === "ready");
  parts.observe.watch({
    outboxPending: () => parts.outbox.pending(),
    inboxPending: () => parts.inbox.pending().length,
    lanes: () => parts.lanes.stats(),
    chatSlots: () => parts.runtime.chatSlots(),
    mcp: () => parts.mcp.status(),
    accounts,
    now: parts.now,
  });
  return accounts;
}

/**
 * The state the gateway owns, wired together: sessions of every agent, lanes and runs, the agent
 * runtime, the delivery gate with its outbox (the one way out), the inbound pipeline and its
 * durable inbox (the one way in), cron and hooks.
 */
export async function createGatewayCore(deps: GatewayCoreDeps) {
  const opened = await openParts(deps);
  const { config, readiness, mcp } = opened;
  const parts: Parts & CoreParts = opened;
  const accounts = watchParts(parts);
  const intake = coreIntake(readiness);
  return {
    ...exposed(parts),
    /** set when this core holds only some partitions (`cluster.owners: "many"`): see {@link GatewayCoreDeps.partial} */
    partial: deps.partial,
    pipeline: parts.pipeline,
    /** on a cluster: before the owner's own `chat.send` is stored, the hand-off pass it waits for, as its hooks do (./handoff-drain.ts) */
    beforeOwnInbound: parts.handoff?.beforeOwnInbound,
    /** on a cluster: before the owner's `chat.abort`, the hand-off pass and the handling of what it took in (./handoff-drain.ts) */
    beforeOwnAbort: parts.handoff?.beforeOwnAbort,
    /** DM pairing codes and the senders owners let in (`pairing.*` methods) */
    pairing: parts.pairing.control,
    metrics: deps.metrics,
    /** Settles once every stored message is finished, lanes are idle, the outbox is drained and no send is in flight (tests wait on it). */
    idle: coreIdle({
      lanes: parts.lanes,
      turns: parts.turns,
      gate: parts.gate,
      outbox: parts.outbox,
      inbox: parts.inbox,
      state: parts.state,
    }),
    /** Readiness with each part's reason (`GET /readyz`, the `health` method, `switchboard health`). */
    health: () => readinessReport(readiness.phase(), accounts(), mcp.status()),
    /** How each MCP server is doing (`/status`, the gateway `status` method, `switchboard doctor`). */
    mcpStatus: () => mcp.status(),
    /** Where a session's replies go when delivered: its last route. */
    lastRoute: (entry: SessionEntry | undefined): DeliveryContext | undefined => entryDeliveryContext(entry),
    /** An alias or `provider/model` to `provider/model`. */
    resolveModelRef: (ref: string): string => deps.resolveModel(resolveAlias(ref, config.models.aliases)).ref,
    start: (sink: AdapterSink): Promise<void> => startCore(parts, sink),
    /** How a platform message is taken in now: handled, only stored (a stop's drain) or refused (./core-lifecycle.ts). */
    intake: intake.now,
    /**
     * Only stores new inbound (replayed at the next start), lets running turns finish and their replies go out (both within
     * `drainMs`; what is left stays in the outbox for the next start), then stops adapters and
     * writes every store in full.
     */
    stop(drainMs = DRAIN_MS): Promise<void> {
      return stopCore(parts, drainMs, intake);
    },
  };
}

/** The gateway's wired state. */
export type GatewayCore = Awaited<ReturnType<typeof createGatewayCore>>;
