import path from "node:path";
import type { ToolSet } from "ai";
import { type AgentRuntime, type ToolContext, createAgentRuntime } from "../agents/agent-runtime.js";
import { createLanes } from "../agents/lanes.js";
import { buildModelCatalog } from "../agents/models/index.js";
import type { ResolvedModel } from "../agents/models/index.js";
import { type DurableRuns, createRunRegistry } from "../agents/run-registry.js";
import type { Inbox } from "../inbound/inbox.js";
import { openToolRecord } from "../agents/tool-record.js";
import type { Config } from "../config/schema/index.js";
import type { CapabilitiesOf } from "../delivery/capabilities-of.js";
import type { ChannelAdapter } from "../delivery/channel-adapter.js";
import type { Deliver } from "../delivery/delivery-request.js";
import { startTyping } from "../delivery/index.js";
import type { Logger } from "../logger.js";
import { parseSessionKey } from "../routing/parse-session-key.js";
import type { AgentSessionsPool } from "../sessions/agent-sessions.js";
import type { StatePort } from "../state/state-port.js";
import { agentToolNames, agentTools } from "../tools/agent-tools.js";
import type { McpManager } from "../tools/mcp/mcp-manager.js";
import { isSandboxed } from "../tools/session-access.js";
import { resolveVisibility } from "../tools/session-visibility.js";
import { type SubagentRegistry, createSubagentRegistry } from "../tools/subagent-registry.js";
import type { ToolDeps } from "../tools/tool-deps.js";
import { sessionsSendRunner } from "../tools/sessions-send-turn.js";
import { agentToAgentRunner } from "../tools/agent-to-agent.js";
import { announceTurnRunner, storeAnnounce } from "../tools/announce-turn.js";
import { spawnTurnRunner } from "../tools/spawn-turn.js";
import { abortTurnRunner, storeAbort } from "../tools/abort-turn.js";
import type { StoredTurns } from "../inbound/stored-turns.js";
import { clientTurnRunner } from "./client-turns.js";
import type { CoreKeys } from "./core-keys.js";
import type { EventHub } from "./event-hub.js";
import type { OpenWorkspace } from "../workspace/workspace-port.js";

/** What the agents' part of the gateway is wired from. */
export interface CoreAgentsDeps {
  config: Config;
  state: StatePort;
  stateDir: string;
  sessions: AgentSessionsPool;
  adapters: Map<string, ChannelAdapter>;
  /** asked before every typing indicator (the PostgreSQL owner's send guard, src/cluster/send-guard.ts); default always */
  mayStillSend?: (() => Promise<boolean>) | undefined;
  capabilitiesOf: CapabilitiesOf;
  clientChannel: string;
  deliver: Deliver;
  /** true when the outbox holds this idempotency key */
  handedOver: (id: string) => boolean;
  events: EventHub;
  keys: CoreKeys;
  /** the inbox's stored turns: `sessions_send` and `agent` calls store theirs there; their runners replay them */
  turns: Pick<StoredTurns, "start" | "register" | "stored" | "untilStored">;
  mcp: McpManager;
  resolveModel: (ref: string) => ResolvedModel;
  workspaceOf: OpenWorkspace;
  logger: Logger;
  now: () => number;
  /** replaces the session tools (tests) */
  tools?: ((context: ToolContext) => ToolSet | Promise<ToolSet>) | undefined;
  chatTurnsAtOnce?: number | undefined;
  /** on PostgreSQL: where run ends are stored beyond this process (`agent.wait` after a takeover) */
  runResults?: { durable: DurableRuns } | undefined;
  /** the durable inbox: on local files, a run it holds pending is known before its replay registers it */
  inbox?: Pick<Inbox, "pendingRun">;
  /** `cluster.owners: "many"`: a session another gateway holds, read from its committed row (ToolDeps) */
  sessionElsewhere?: ToolDeps["sessionElsewhere"];
}

/**
 * The sub-agent registry; an announce is a stored turn in the requester's inbox (handed over once
 * its dedupe key is stored, or, from before that, its outbox item exists), a child's stop an
 * `abort` turn in the child's inbox.
 */
function openSubagents(deps: CoreAgentsDeps, runtime: () => AgentRuntime) {
  const { config, turns } = deps;
  return createSubagentRegistry({
    state: deps.state,
    path: path.join(deps.stateDir, "subagents.json"),
    sessions: deps.sessions,
    runtime,
    handOver: (announce) => storeAnnounce(turns, config.state.postgres.schema, announce),
    stopChild: (record) => storeAbort(turns, config.state.postgres.schema, record),
    logger: deps.logger,
    now: deps.now,
    handedOver: (id) => turns.stored(id) || deps.handedOver(id),
    archiveAfterMinutes: config.agents.defaults.subagents.archiveAfterMinutes,
    clientChannel: deps.clientChannel,
    announceStats: config.agents.defaults.subagents.announceStats,
  });
}

/** Registers the runners of the stored turns the session tools start (sends, their flows, spawns, announces, stops) and clients'. */
function registerRunners(deps: CoreAgentsDeps, toolDeps: ToolDeps, runtime: AgentRuntime): void {
  const { events } = deps;
  deps.turns.register("tool", sessionsSendRunner(toolDeps));
  deps.turns.register("a2a", agentToAgentRunner(toolDeps));
  deps.turns.register("spawn", spawnTurnRunner(toolDeps));
  deps.turns.register(
    "announce",
    announceTurnRunner({
      sessions: deps.sessions,
      logger: deps.logger,
      deliver: deps.deliver,
      onAnnounce: ({ sessionKey, id }) =>
        events.emit("chat", { sessionKey, runId: id, state: "announce", announce: true }),
    }),
  );
  deps.turns.register("abort", abortTurnRunner({ subagents: toolDeps.subagents, runtime }));
  deps.turns.register("client", clientTurnRunner({ runtime, keys: deps.keys }));
}

/** Where the tool-call record is kept. */
const toolRecordPath = (deps: CoreAgentsDeps) => path.join(deps.stateDir, "tool-calls.json");

/** What the session tools of every turn share. */
function toolDepsOf(
  deps: CoreAgentsDeps,
  parts: { runs: ToolDeps["runs"]; subagents: SubagentRegistry },
  runtime: () => AgentRuntime,
) {
  const { keys } = deps;
  const toolDeps: ToolDeps = {
    clientChannel: deps.clientChannel,
    config: deps.config,
    sessions: deps.sessions,
    runs: parts.runs,
    startTurn: deps.turns.start,
    turns: deps.turns,
    deliver: deps.deliver,
    subagents: parts.subagents,
    keys: keys.keyContext,
    agentIds: keys.agentIds,
    catalog: buildModelCatalog(deps.config),
    logger: deps.logger,
    now: deps.now,
    workspaceOf: deps.workspaceOf,
    mcp: deps.mcp,
    ...(deps.sessionElsewhere && { sessionElsewhere: deps.sessionElsewhere }),
    parentAgentOf: (childKey) => {
      const requester = parts.subagents.byChild(childKey)?.requesterKey;
      const parsed = requester === undefined ? undefined : parseSessionKey(requester, keys.keyContext);
      return parsed && "agentId" in parsed ? parsed.agentId : undefined;
    },
    toolNamesFor: (agentId) => agentToolNames(toolDeps, agentId),
    get runtime() {
      return runtime();
    },
  };
  return toolDeps;
}

/** A turn's session tools: sandboxing and visibility from the config, once the MCP servers had their first connect. */
function sessionToolsOf(deps: CoreAgentsDeps, toolDeps: ToolDeps) {
  const { config } = deps;
  return async (context: ToolContext) => {
    await deps.mcp.ready(); // a turn that starts with the gateway is offered servers still connecting
    return agentTools(toolDeps, {
      ...context,
      sandboxed: isSandboxed(config, context.agentId, context.sessionKey),
      visibility: resolveVisibility(config, {
        agentId: context.agentId,
        channel: context.origin?.channel,
        owner: context.owner ?? false,
      }),
    });
  };
}

/** Lanes, runs, the sub-agent registry, the session tools and the agent runtime, wired to each other. */
export async function openCoreAgents(deps: CoreAgentsDeps) {
  const lanes = createLanes();
  // Run events carry the run's state only: its reply reaches every chat as a delivery.
  const runs = createRunRegistry({
    now: deps.now,
    onChange: ({ text: _reply, ...run }) => deps.events.emit("agent", run),
    ...(deps.runResults ? { durable: deps.runResults.durable } : deps.inbox && { pendingHere: deps.inbox.pendingRun }),
  });
  let runtime: AgentRuntime | undefined;
  const current = () => runtime!;
  const subagents = await openSubagents(deps, current);
  const toolDeps = toolDepsOf(deps, { runs, subagents }, current);
  const sessionTools = sessionToolsOf(deps, toolDeps);
  // Each turn's tool calls, recorded before the model sees them: a replayed turn is answered from it.
  const toolRecord = await openToolRecord({ state: deps.state, path: toolRecordPath(deps), now: deps.now });
  runtime = createAgentRuntime({
    config: deps.config,
    sessions: deps.sessions,
    lanes,
    runs,
    logger: deps.logger,
    now: deps.now,
    deliver: deps.deliver,
    resolveModel: deps.resolveModel,
    tools: deps.tools ?? sessionTools,
    toolRecord,
    workspaceOf: deps.workspaceOf,
    onEvent: (event) => deps.events.emit(event.type, event),
    typing: (target) => startTyping(deps.adapters.get(target.channel), target, undefined, undefined, deps.mayStillSend),
    capabilitiesOf: deps.capabilitiesOf,
    ...(deps.chatTurnsAtOnce !== undefined && { chatTurnsAtOnce: deps.chatTurnsAtOnce }),
  });
  registerRunners(deps, toolDeps, runtime);
  return { lanes, runs, subagents, toolDeps, sessionTools, runtime, toolRecord };
}
