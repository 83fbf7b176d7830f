import path from "node:path";
import type { ToolSet } from "ai";
import type { AgentRuntime, ToolContext } from "../agents/agent-runtime.js";
import type { Lanes } from "../agents/lanes.js";
import type { ResolvedModel } from "../agents/models/index.js";
import type { DurableRuns, RunRegistry } from "../agents/run-registry.js";
import { type PendingRun, createRunResults } from "../cluster/run-results.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import { type CommandDispatcher, createCommandDispatcher } from "../commands/command-dispatcher.js";
import { subagentControlOf } from "../commands/registry-subagents.js";
import type { Config } from "../config/schema/index.js";
import { cronControlOf } from "../cron/cron-control.js";
import type { openCron } from "../cron/open-cron.js";
import type { CapabilitiesOf } from "../delivery/capabilities-of.js";
import type { ChannelAdapter } from "../delivery/channel-adapter.js";
import type { DeliveryGate } from "../delivery/delivery-gate.js";
import type { Deliver } from "../delivery/delivery-request.js";
import { createInboundPipeline } from "../inbound/handle-inbound.js";
import { type Inbox, createInbox } from "../inbound/inbox.js";
import type { InboxForwarding } from "../inbound/inbox-forward.js";
import { deliverThroughHolder, noticeTurnRunner } from "../inbound/notice-turn.js";
import { type Pairing, createPairing } from "../inbound/pairing.js";
import { openPairingStore } from "../inbound/pairing-store.js";
import { type StoredTurns, createStoredTurns } from "../inbound/stored-turns.js";
import type { Logger } from "../logger.js";
import type { AgentSessionsPool } from "../sessions/agent-sessions.js";
import type { StatePort } from "../state/state-port.js";
import type { McpManager } from "../tools/mcp/mcp-manager.js";
import type { GateTimers } from "../delivery/gate-timer.js";
import type { SubagentRegistry } from "../tools/subagent-registry.js";
import type { CoreKeys } from "./core-keys.js";
import type { EventHub } from "./event-hub.js";
import type { OpenWorkspace } from "../workspace/workspace-port.js";

/**
 * The durable inbox and the turns stored in it: opened before the runtime and the tools, which
 * store the turns they start (`sessions_send`, hooks, `agent` calls) there.
 */
export async function openCoreInbox(deps: {
  state: StatePort;
  stateDir: string;
  logger: Logger;
  now: () => number;
  timers?: GateTimers | undefined;
  /** the "postgres" backend's database: run ends are stored there too (`run_results`) */
  database?: PostgresDatabase | undefined;
  /** `cluster.owners: "many"`: entries of sessions held elsewhere are forwarded (./inbox-forwarding.ts `inboxForwarding`); default: every session is held */
  forwarding?: InboxForwarding | undefined;
  /** false on a partition core (`cluster.owners: "many"`): the global holder prunes the run results */
  prunes?: boolean;
}) {
  let inbox: Inbox | undefined;
  const runResults = deps.database && openRunResults(deps.database, deps, (runId) => inbox?.pendingRun(runId));
  inbox = await createInbox({
    state: deps.state,
    path: path.join(deps.stateDir, "inbox.json"),
    legacyDedupePath: path.join(deps.stateDir, "inbound-dedupe.json"),
    logger: deps.logger,
    now: deps.now,
    ...(runResults && deps.prunes !== false && { onPrune: runResults.prune }),
    ...deps.forwarding,
  });
  return { inbox, runResults, turns: createStoredTurns({ inbox, logger: deps.logger, timers: deps.timers }) };
}

/** The durable run results on PostgreSQL, as the run registry uses them; a run the inbox holds (`pendingHere`) is pending. */
export function openRunResults(
  database: PostgresDatabase,
  deps: { logger: Logger; now: () => number },
  pendingHere?: (runId: string) => PendingRun | undefined,
) {
  const results = createRunResults({
    database,
    logger: deps.logger,
    now: deps.now,
    ...(pendingHere && { pendingHere }),
  });
  const durable: DurableRuns = {
    ...results,
    record: (run) => results.record({ ...run, endedAt: run.endedAt ?? deps.now() }),
  };
  return { durable, prune: results.prune, close: results.close };
}

/** What the way in is wired from. */
export interface CoreInboundDeps {
  inbox: Inbox;
  turns: StoredTurns;
  config: Config;
  state: StatePort;
  stateDir: string;
  sessions: AgentSessionsPool;
  adapters: Map<string, ChannelAdapter>;
  capabilitiesOf: CapabilitiesOf;
  runtime: AgentRuntime;
  lanes: Lanes;
  runs: RunRegistry;
  gate: DeliveryGate;
  deliver: Deliver;
  handedOver: (id: string) => boolean;
  subagents: SubagentRegistry;
  cron: Awaited<ReturnType<typeof openCron>>;
  mcp: McpManager;
  keys: CoreKeys;
  events: EventHub;
  resolveModel: (ref: string) => ResolvedModel;
  tools: (context: ToolContext) => ToolSet | Promise<ToolSet>;
  workspaceOf: OpenWorkspace;
  commands?: CommandDispatcher | undefined;
  /** `cluster.owners: "many"`: the inbox's forward (notices of sessions held elsewhere go to their holder); default none */
  forwarding?: InboxForwarding | undefined;
  logger: Logger;
  now: () => number;
}

/** The chat commands, unless the caller brought its own (tests). */
function commandsOf(deps: CoreInboundDeps, inbox: Inbox, pairing: Pairing): CommandDispatcher {
  return (
    deps.commands ??
    createCommandDispatcher({
      config: deps.config,
      sessions: deps.sessions,
      runtime: deps.runtime,
      lanes: deps.lanes,
      runs: deps.runs,
      gate: deps.gate,
      logger: deps.logger,
      now: deps.now,
      resolveModel: deps.resolveModel,
      tools: deps.tools,
      subagents: subagentControlOf(deps.subagents),
      cron: cronControlOf(deps.cron),
      workspaceOf: deps.workspaceOf,
      mcpStatus: () => deps.mcp.status(),
      setAside: () => inbox.listSetAside(),
      accountHealth: (channel, accountId) => deps.adapters.get(channel)?.accountHealth?.(accountId),
      capabilitiesOf: deps.capabilitiesOf,
      pairing: pairing.control,
    })
  );
}

/**
 * The gate DM pairing's notices go through: with `cluster.owners: "many"`, a notice of a session
 * another gateway holds is a stored `notice` turn forwarded to that holder (src/inbound/notice-turn.ts).
 */
function pairingDeliver(deps: CoreInboundDeps): Deliver {
  const holds = deps.forwarding?.holds;
  if (!holds || !deps.forwarding?.forward) return deps.deliver;
  return deliverThroughHolder({
    deliver: deps.deliver,
    holds,
    start: deps.turns.start,
    scope: deps.config.state.postgres.schema,
  });
}

/** DM pairing, the chat commands and the inbound pipeline on the durable inbox: the one way in. */
export async function openCoreInbound(deps: CoreInboundDeps) {
  const { config, state, stateDir, logger, now, keys, inbox } = deps;
  const pairingStore = await openPairingStore({ state, path: path.join(stateDir, "pairing.json"), now });
  const parseKey = (raw: string) => keys.parseKey(raw).parsed;
  // Every core runs the notices other gateways' DM pairing forwards to its sessions.
  deps.turns.register("notice", noticeTurnRunner({ deliver: deps.deliver, parseKey }));
  const pairing = createPairing({ config, store: pairingStore, deliver: pairingDeliver(deps), parseKey, logger, now });
  const pipeline = createInboundPipeline({
    config,
    sessions: deps.sessions,
    runtime: deps.runtime,
    inbox,
    turns: deps.turns,
    deliver: deps.deliver,
    logger,
    commands: commandsOf(deps, inbox, pairing),
    handedOver: deps.handedOver,
    capabilitiesOf: deps.capabilitiesOf,
    pairing,
    emit: (event, payload) => deps.events.emit(event, payload),
  });
  return { pairingStore, pairing, pipeline };
}
