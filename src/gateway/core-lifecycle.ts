import type { Lanes } from "../agents/lanes.js";
import { ensureWorkspace } from "../agents/workspace/ensure-workspace.js";
import type { Config } from "../config/schema/index.js";
import type { AdapterStartContext, ChannelAdapter } from "../delivery/channel-adapter.js";
import type { DeliveryGate } from "../delivery/delivery-gate.js";
import type { Outbox } from "../delivery/outbox.js";
import type { Inbox } from "../inbound/inbox.js";
import type { Pairing } from "../inbound/pairing.js";
import type { PairingStore } from "../inbound/pairing-store.js";
import type { Logger } from "../logger.js";
import type { AgentSessionsPool } from "../sessions/agent-sessions.js";
import type { ChannelStates } from "../state/channel-state.js";
import type { StatePort } from "../state/state-port.js";
import type { McpManager } from "../tools/mcp/mcp-manager.js";
import type { SubagentRegistry } from "../tools/subagent-registry.js";
import type { openCoreAutomation } from "./core-automation.js";
import type { createReadiness } from "./readiness.js";
import type { OpenWorkspace } from "../workspace/workspace-port.js";
import type { HandoffDrain } from "./handoff-drain.js";
import type { observeCore } from "./metrics/observe-core.js";
import type { StartupSteps } from "./startup-steps.js";
import type { CorePeers } from "./core-peers.js";
import type { PeerHandler } from "./peer-handlers.js";

type Automation = Awaited<ReturnType<typeof openCoreAutomation>>;
type Readiness = ReturnType<typeof createReadiness>;

/** The parts of the gateway that start and stop, in the order the two steps below name them. */
export interface CoreParts {
  config: Config;
  logger: Logger;
  state: StatePort;
  /** each adapter's durable state, handed to it at start */
  channelStates: ChannelStates;
  sessions: AgentSessionsPool;
  adapters: Map<string, ChannelAdapter>;
  keys: { agentIds: () => string[] };
  workspaceOf: OpenWorkspace;
  mcp: McpManager;
  /** `only`: replay just the pending entries of those sessions (partitions adopted while running) */
  pipeline: { resume(only?: (sessionKey: string) => boolean): Promise<number> };
  gate: DeliveryGate;
  outbox: Outbox;
  lanes: Lanes;
  inbox: Inbox;
  pairing: Pairing;
  pairingStore: PairingStore;
  subagents: SubagentRegistry;
  toolRecord: { close(): Promise<void> };
  retention: { start(): void; stop(): Promise<void> };
  cron: Automation["cron"];
  hooks: Automation["hooks"];
  /** turns hooks, gateway clients and tools started (stored in the inbox) */
  turns: { idle(): Promise<void>; stop(): void };
  readiness: Readiness;
  /** on PostgreSQL: the owner's leases of its channel accounts (./core-cluster.ts), taken before each connects */
  cluster?: {
    holdAccount(channel: string, accountId: string): Promise<void>;
    releaseAccounts(): Promise<void>;
    mayStillSend(): Promise<boolean>;
  };
  /** times each step of the start (logged with "gateway listening") */
  steps?: StartupSteps;
  /** on a cluster: the drain of what other gateways stored for this owner (./handoff-drain.ts) */
  handoff?: HandoffDrain | undefined;
  /** on PostgreSQL: the durable run results (their LISTEN connection) */
  runResults?: { close(): Promise<void> } | undefined;
  /** `cluster.owners: "many"`, not the global holder: its sessions' work only (./gateway-core.ts) */
  partitionsOnly?: boolean;
  /** what each adapter is lent to be counted by the metrics (./metrics/observe-core.ts) */
  observe: Pick<ReturnType<typeof observeCore>, "adapterContext">;
  /** `cluster.owners: "many"`: the peer call to the global holder and the process's peer handlers (./core-peers.ts) */
  peers?: CorePeers | undefined;
}

/** What each adapter is started with: where its inbound messages go. */
export type AdapterSink = (adapter: ChannelAdapter) => Parameters<ChannelAdapter["start"]>[0];

/**
 * What an adapter starts with: its channel's state, its counter of lost messages and, on a
 * cluster, the account lease, the send guard and the hand-off drain.
 */
function startContext(parts: CoreParts, channel: string): AdapterStartContext {
  const { cluster, handoff, peers } = parts;
  return {
    state: parts.channelStates.forChannel(channel),
    ...parts.observe.adapterContext(channel),
    ...(cluster && {
      holdAccount: (accountId: string) => cluster.holdAccount(channel, accountId),
      mayAct: cluster.mayStillSend,
    }),
    ...(handoff && { beforeInbound: handoff.beforeOwnInbound }),
    ...(peers && {
      callHolder: peers.callHolder,
      servePeers: (name: string, handler: PeerHandler) => peers.handlers.set(name, handler),
    }),
  };
}

/** The adapters: receiving on the one owner or the global holder; send-only on a partition core (another gateway holds the accounts). */
async function startAdapters(parts: CoreParts, sink: AdapterSink): Promise<void> {
  const receive = !parts.partitionsOnly;
  for (const adapter of parts.adapters.values())
    await adapter.start(sink(adapter), { ...startContext(parts, adapter.id), ...(!receive && { receive }) });
}

/** What the one owner (or the global holder of `cluster.owners: "many"`) runs for the whole schema. */
async function startGlobalWork(parts: CoreParts): Promise<void> {
  // Senders approved with `switchboard pairing approve` while no gateway ran learn it now.
  await parts.pairing.announcePending();
  parts.steps?.mark("pairing");
  if (parts.config.cron.enabled) await parts.cron.start();
}

/**
 * Starts the gateway: every agent's store (a corrupt file is reported and a killed write's temp
 * file removed), workspaces and MCP servers (the first turn reads the one and may call the other),
 * interrupted messages (they take their lanes before new traffic), adapters (resumed outbox items
 * need one to leave through), the gate, pairing news, sub-agents, retention and cron.
 */
export async function startCore(parts: CoreParts, sink: AdapterSink): Promise<void> {
  const { sessions, logger } = parts;
  const mark = (step: string) => parts.steps?.mark(step);
  const agentIds = parts.keys.agentIds();
  // Independent of each other, so they load together (a takeover waits on the slowest, not the sum).
  // All settle before a failure is thrown: the failed start's stop must not close what is still opening.
  const started = await Promise.allSettled([
    ...agentIds.map((agentId) => sessions.forAgent(agentId)),
    // The workspaces' rows are of no session: the global holder (or the one owner) writes their templates.
    ...(parts.partitionsOnly ? [] : agentIds.map((agentId) => ensureWorkspace(parts.workspaceOf(agentId)))),
    parts.mcp.start(),
  ]);
  const failed = started.find((result) => result.status === "rejected");
  if (failed) throw failed.reason;
  mark("sessionsWorkspacesMcp");
  const replayed = await parts.pipeline.resume();
  if (replayed > 0) logger.info({ replayed }, "replayed inbound messages a restart interrupted");
  mark("inboxResume");
  await startAdapters(parts, sink);
  // After the inbox's own entries (what was handed off while no owner ran arrived after them) and
  // the adapters (a platform event handed off is taken in by its running account).
  await parts.handoff?.start();
  mark("adapters");
  parts.gate.start();
  // Every core sweeps the sessions it holds (a partition core not their archives: ./gateway-core.ts).
  parts.retention.start();
  if (!parts.partitionsOnly) await startGlobalWork(parts);
  mark("cron");
  parts.readiness.ready();
  // Announcing the runs a restart (or a takeover) cut off runs turns: it holds no one's readiness.
  parts.subagents.recover();
}

/**
 * How the core's sink takes a platform message in: `handle` while it runs; `store` once a stop
 * began (the drain: stored unhandled, the next start replays it, so a platform that acknowledges
 * on receipt, as WhatsApp does, loses nothing); `refuse` once the adapters stopped (the stores close next).
 */
export function coreIntake(readiness: Readiness) {
  let phase: "handle" | "store" | "refuse" = "handle";
  return {
    now: () => (phase === "handle" && readiness.phase() === "draining" ? "store" : phase),
    stopping(): void {
      phase = "store";
    },
    closing(): void {
      phase = "refuse";
    },
  };
}

type CoreIntake = ReturnType<typeof coreIntake>;

/** How long a stop lets running turns finish before it cuts them (an evict of partitions waits as long). */
export const DRAIN_MS = 10_000;

/** Lets running turns (and what stored turns hand over after theirs: a hook's announce) finish within `ms`. */
async function drainTurns(parts: CoreParts, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const turnsDone = parts.lanes.idle().then(() => parts.turns.idle());
  await Promise.race([turnsDone, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** Closes every store; each state file is written in full, so after a stop it alone is exact (docs/performance.md). */
async function closeStores(parts: CoreParts): Promise<void> {
  await parts.sessions.close();
  await parts.outbox.close();
  await parts.inbox.close();
  await parts.pairingStore.close();
  await parts.toolRecord.close();
  await parts.channelStates.close();
  // The stores are closed; the port closes whatever table is left.
  await parts.state.close();
}

/**
 * Stops the gateway within one budget (cron, turns, hook announces and deliveries share it): what
 * is left stays in the outbox for the next start; then adapters stop (the sink, which stored
 * without handling during the drain, refuses from then on: `intake`) and every store is written in full.
 */
export async function stopCore(parts: CoreParts, drainMs: number, intake?: CoreIntake): Promise<void> {
  const { logger } = parts;
  intake?.stopping();
  parts.readiness.draining();
  // Nothing more is taken in from the hand-off inbox: it waits there for the next owner.
  await parts.handoff?.stop();
  // The sub-agent recovery (after readiness) starts no new announce turn once the stop began.
  parts.subagents.stopRecovery();
  // A flow's next step waiting for a retry is left to the next start, which replays the step before it.
  parts.turns.stop();
  const deadline = Date.now() + drainMs;
  const left = () => Math.max(0, deadline - Date.now());
  await parts.cron.stop(left());
  await drainTurns(parts, left());
  const undelivered = await parts.gate.drain(left());
  if (undelivered > 0)
    logger.warn({ pending: undelivered }, "stopping with messages not delivered yet; they go out at the next start");
  for (const adapter of parts.adapters.values())
    await adapter.stop().catch((err: unknown) => logger.warn({ channel: adapter.id, err }, "adapter stop failed"));
  // Nothing more comes in: from here on the sink refuses (the stores close below).
  intake?.closing();
  // Every account is disconnected: the next owner may take them at once. A partition core holds none
  // (beside the global core, the process's account leases are that core's).
  if (!parts.partitionsOnly) await parts.cluster?.releaseAccounts();
  // Messages whose turns this stop cut off were not the ones that crashed the gateway.
  await parts.inbox
    .forgiveInterruptedStarts()
    .catch((err: unknown) => logger.warn({ err }, "inbox start counts not kept"));
  await parts.subagents.close();
  // Before the database closes: its LISTEN connection, and a prune in flight.
  await parts.runResults?.close();
  await parts.retention.stop();
  await parts.mcp.close();
  await parts.gate.stop();
  await closeStores(parts);
}
