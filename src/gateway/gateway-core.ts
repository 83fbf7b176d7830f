import path from "node:path";
import { type AgentRuntime, type ToolContext, createAgentRuntime } from "../agents/agent-runtime.js";
import type { ResolvedModel } from "../agents/models/index.js";
import { createLanes } from "../agents/lanes.js";
import { buildModelCatalog, resolveAlias } from "../agents/models/index.js";
import { createRunRegistry } from "../agents/run-registry.js";
import { type CommandDispatcher, createCommandDispatcher } from "../commands/command-dispatcher.js";
import { subagentControlOf } from "../commands/registry-subagents.js";
import { resolveStorePath } from "../config/paths.js";
import type { Config } from "../config/schema/index.js";
import type { ChannelAdapter } from "../delivery/channel-adapter.js";
import type { Deliver } from "../delivery/delivery-request.js";
import type { CapabilitiesOf } from "../delivery/capabilities-of.js";
import { type DeliveryGateDeps, createDeliveryGate, createOutbox, startTyping } from "../delivery/index.js";
import { cronControlOf } from "../cron/cron-control.js";
import { openCron } from "../cron/open-cron.js";
import { createHooksHandler } from "../hooks/hooks-handler.js";
import { coreIdle } from "./core-idle.js";
import { originRefusal } from "./request-guard.js";
import { DEFAULT_RETRY } from "../config/schema/channel-defaults.js";
import { isConfiguredChannel, resolveChannelSettings } from "../inbound/channel-settings.js";
import { createInbox } from "../inbound/inbox.js";
import { createInboundPipeline } from "../inbound/handle-inbound.js";
import { createPairing } from "../inbound/pairing.js";
import { openPairingStore } from "../inbound/pairing-store.js";
import type { Logger } from "../logger.js";
import { DEFAULT_ACCOUNT_ID, DEFAULT_AGENT_ID } from "../routing/normalize.js";
import { parseSessionKey } from "../routing/parse-session-key.js";
import { resolveDefaultAgentId } from "../routing/resolve-route.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import { mainSessionKey, requireSessionKey } from "../routing/session-key-refs.js";
import { createAgentSessionsPool } from "../sessions/agent-sessions.js";
import { retentionPlan } from "../sessions/retention/retention-plan.js";
import { type SweepTimers, createRetentionSweeper } from "../sessions/retention/retention-sweeper.js";
import { isSandboxed } from "../tools/session-access.js";
import { resolveVisibility } from "../tools/session-visibility.js";
import { createSubagentRegistry } from "../tools/subagent-registry.js";
import type { ToolDeps } from "../tools/tool-deps.js";
import { agentToolNames, agentTools } from "../tools/agent-tools.js";
import { createMcpManager } from "../tools/mcp/mcp-manager.js";
import { openLocalState } from "../state/local-state.js";
import type { StatePort } from "../state/state-port.js";
import { ensureWorkspace } from "../agents/workspace/ensure-workspace.js";
import { workspaceDir } from "../agents/workspace/workspace-dir.js";
import { entryDeliveryContext } from "../sessions/delivery-context.js";
import type { DeliveryContext, SessionEntry } from "../sessions/session-entry.js";
import type { ToolSet } from "ai";
import type { EventHub } from "./event-hub.js";
import { createWebchatAdapter } from "./webchat-adapter.js";
import type { GatewayMetrics } from "./metrics/gateway-metrics.js";
import { observeCore } from "./metrics/observe-core.js";
import { createReadiness, readinessReport } from "./readiness.js";
import { accountStates } from "./account-states.js";

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
  /** where every store keeps its table; default: local files under `home` ({@link openLocalState}) */
  state?: StatePort;
  /** turns answering chat messages that run at once; default 256 (tests lower it) */
  chatTurnsAtOnce?: number;
  /** the gateway's one metrics registry (`GET /metrics`); default none: nothing is counted */
  metrics?: GatewayMetrics;
  now?: () => number;
  /** timers of the hourly retention pass; default the real ones (tests pass a manual clock's) */
  timers?: SweepTimers;
}

/**
 * The state the gateway owns, wired together: sessions of every agent, lanes and runs, the
 * agent runtime, the delivery gate with its outbox, the inbound pipeline and its durable inbox.
 */
export async function createGatewayCore(deps: GatewayCoreDeps) {
  const { config, home, logger, events } = deps;
  const now = deps.now ?? Date.now;
  const stateDir = path.join(home, "state");
  // One port for every store: the session stores, the outbox, the sub-agent registry and the inbox.
  const observe = observeCore(deps.metrics);
  const resolveModel = observe.models(deps.resolveModel);
  const state = deps.state ?? openLocalState({ dir: stateDir, logger, now, ...observe.journal });
  const sessions = createAgentSessionsPool({
    state,
    session: config.session,
    logger,
    now,
    catalog: buildModelCatalog(config),
    storePathFor: (agentId) => resolveStorePath(home, agentId, config.session.store, deps.homeDir),
  });
  const webchat = createWebchatAdapter(events);
  const adapters = new Map<string, ChannelAdapter>([
    [webchat.id, webchat],
    ...(deps.adapters ?? []).map((a) => [a.id, a] as const),
  ]);
  /** What each channel's adapter declared: the core reads these flags, never channel names. */
  const capabilitiesOf: CapabilitiesOf = (channel) => adapters.get(channel)?.capabilities;
  const outbox = await createOutbox({ state, path: path.join(stateDir, "outbox.json"), now });
  let stopping = false;
  const gate = createDeliveryGate({
    adapters: (channel) => adapters.get(channel),
    outbox,
    policy: () => config.session.sendPolicy,
    // Each account's own `retry` setting; the web chat has no config section and uses the default.
    retryFor: (target) =>
      isConfiguredChannel(target.channel)
        ? resolveChannelSettings(config, target.channel, target.accountId ?? DEFAULT_ACCOUNT_ID).retry
        : DEFAULT_RETRY,
    logger,
    now,
    ...(deps.retry && { retry: deps.retry }),
    ...observe.deliveries,
  });
  // The gateway's clients are the owner's own window onto the session: what reaches them is shown, whatever sendPolicy says.
  const deliver: Deliver = (request) =>
    gate.deliver({
      ...request,
      bypassPolicy: request.bypassPolicy || capabilitiesOf(request.target.channel)?.gatewayClients === true,
    });
  const lanes = createLanes();
  const runs = createRunRegistry({ now, onChange: (run) => events.emit("agent", run) });
  const keyContext = {
    defaultAgentId: resolveDefaultAgentId(config),
    mainKey: config.session.mainKey,
    scope: config.session.scope,
  };
  const agentIds = (): string[] =>
    config.agents.list.length ? config.agents.list.map((agent) => agent.id) : [DEFAULT_AGENT_ID];
  let runtime: AgentRuntime;
  const subagents = await createSubagentRegistry({
    state,
    path: path.join(stateDir, "subagents.json"),
    sessions,
    runtime: () => runtime,
    deliver,
    logger,
    now,
    handedOver: (id) => outbox.get(id) !== undefined,
    archiveAfterMinutes: config.agents.defaults.subagents.archiveAfterMinutes,
    capabilitiesOf,
    announceStats: config.agents.defaults.subagents.announceStats,
    // Every client of the requester session sees the announce, whichever channel it is delivered to.
    onAnnounce: ({ sessionKey, id, text }) =>
      events.emit("chat", { sessionKey, runId: id, state: "announce", role: "assistant", text, announce: true }),
  });
  const workspaceOf = (agentId: string) => workspaceDir(config, home, agentId);
  const mcp = createMcpManager({ config: config.mcp, logger, now });
  const toolDeps: ToolDeps = {
    clientChannel: webchat.id,
    config,
    sessions,
    runs,
    deliver,
    subagents,
    keys: keyContext,
    agentIds,
    catalog: buildModelCatalog(config),
    logger,
    now,
    workspaceOf,
    mcp,
    parentAgentOf: (childKey) => {
      const requester = subagents.byChild(childKey)?.requesterKey;
      const parsed = requester === undefined ? undefined : parseSessionKey(requester, keyContext);
      return parsed && "agentId" in parsed ? parsed.agentId : undefined;
    },
    toolNamesFor: (agentId) => agentToolNames(toolDeps, agentId),
    get runtime() {
      return runtime;
    },
  };
  const sessionTools = async (context: ToolContext) => {
    await mcp.ready(); // a turn that starts with the gateway is offered servers still connecting
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
  runtime = createAgentRuntime({
    config,
    sessions,
    lanes,
    runs,
    logger,
    now,
    deliver,
    resolveModel,
    tools: deps.tools ?? sessionTools,
    workspaceOf,
    onEvent: (event) => events.emit(event.type, event),
    typing: (target) => startTyping(adapters.get(target.channel), target),
    capabilitiesOf,
    ...(deps.chatTurnsAtOnce !== undefined && { chatTurnsAtOnce: deps.chatTurnsAtOnce }),
  });
  /** A key a client names, in any spelling, to its canonical form and owning agent; INVALID_SESSION_KEY when no grammar makes it. */
  const parseKey = (raw: string): { parsed: ParsedSessionKey; agentId: string } => {
    const parsed = requireSessionKey(raw, keyContext);
    return { parsed, agentId: "agentId" in parsed ? parsed.agentId : keyContext.defaultAgentId };
  };
  /** The agent owning a canonical key (a run's), without throwing: the default agent for keys of none. */
  const agentOfKey = (key: string): string => {
    const parsed = parseSessionKey(key, keyContext);
    return parsed && "agentId" in parsed ? parsed.agentId : keyContext.defaultAgentId;
  };
  const mainKeyOf = (agentId: string) => mainSessionKey(agentId, config.session.mainKey);
  const targetsOf = (channel: string) => adapters.get(channel)?.targets;
  const cron = await openCron({
    home,
    config: config.cron,
    runtime,
    sessions,
    deliver,
    mainKeyOf,
    targetsOf,
    parseKey,
    logger,
    now,
  });
  const hooks = createHooksHandler({
    config: config.hooks,
    runtime,
    sessions,
    deliver,
    mainKeyOf,
    targetsOf,
    parseKey,
    logger,
    now,
    agentIds,
    defaultAgentId: () => keyContext.defaultAgentId,
    resolveModelRef: (ref) => deps.resolveModel(resolveAlias(ref, config.models.aliases)).ref,
    originRefusal: (req) => originRefusal(req, config.gateway.allowedOrigins),
    trustedProxies: config.gateway.trustedProxies,
  });
  const inbox = await createInbox({
    state,
    path: path.join(stateDir, "inbox.json"),
    legacyDedupePath: path.join(stateDir, "inbound-dedupe.json"),
    logger,
    now,
  });
  const pairingStore = await openPairingStore({ state, path: path.join(stateDir, "pairing.json"), now });
  const pairing = createPairing({
    config,
    store: pairingStore,
    deliver,
    parseKey: (raw) => parseKey(raw).parsed,
    logger,
    now,
  });
  const commands =
    deps.commands ??
    createCommandDispatcher({
      config,
      sessions,
      runtime,
      lanes,
      runs,
      gate,
      logger,
      now,
      resolveModel,
      tools: deps.tools ?? sessionTools,
      subagents: subagentControlOf(subagents),
      cron: cronControlOf(cron),
      workspaceOf,
      mcpStatus: () => mcp.status(),
      setAside: () => inbox.listSetAside(),
      accountHealth: (channel, accountId) => adapters.get(channel)?.accountHealth?.(accountId),
      capabilitiesOf,
      pairing: pairing.control,
    });
  const retention = createRetentionSweeper({
    agents: () => sessions.all(),
    plan: retentionPlan(config.session),
    logger,
    now,
    ...(deps.timers && { timers: deps.timers }),
  });
  const inboundPipeline = createInboundPipeline({
    config,
    sessions,
    runtime,
    inbox,
    deliver,
    logger,
    commands,
    handedOver: (id) => outbox.get(id) !== undefined,
    capabilitiesOf,
    pairing,
    emit: (event, payload) => events.emit(event, payload),
  });
  const pipeline = observe.pipeline(inboundPipeline, agentOfKey);
  const readiness = createReadiness();
  const accounts = () => accountStates(adapters.values(), config, readiness.phase() === "ready");
  observe.watch({
    outboxPending: () => outbox.pending(),
    inboxPending: () => inbox.pending().length,
    lanes: () => lanes.stats(),
    chatSlots: () => runtime.chatSlots(),
    mcp: () => mcp.status(),
    accounts,
    now,
  });

  return {
    config,
    home,
    sessions,
    lanes,
    runs,
    runtime,
    gate,
    outbox,
    pipeline,
    inbox,
    /** DM pairing codes and the senders owners let in (`pairing.*` methods) */
    pairing: pairing.control,
    adapters,
    capabilitiesOf,
    /** the channel of the gateway's own clients (terminal, web chat): their messages enter the pipeline on it */
    clientChannel: webchat.id,
    now,
    logger,
    subagents,
    toolDeps,
    agentIds,
    workspaceOf,
    cron,
    hooks,
    /** `session.retention` and `archiveRetention`, applied hourly; `sweep()` runs a pass now */
    retention,
    parseKey,
    mainKeyOf,
    /** each running adapter's target codec (`<channel>:<rest>` targets of cron jobs and hooks) */
    targetsOf,
    metrics: deps.metrics,
    readiness,
    /** Settles once lanes are idle, the outbox is drained and no send is in flight (tests wait on it). */
    idle: coreIdle({ lanes, hooks, gate, outbox }),
    /** Readiness with each part's reason (`GET /readyz`, the `health` method, `switchboard health`). */
    health: () => readinessReport(readiness.phase(), accounts(), mcp.status()),
    /** How each MCP server is doing (`/status`, the gateway `status` method, `switchboard doctor`). */
    mcpStatus: () => mcp.status(),
    defaultAgentId: () => keyContext.defaultAgentId,
    /** Where a session's replies go when delivered: its last route. */
    lastRoute: (entry: SessionEntry | undefined): DeliveryContext | undefined => entryDeliveryContext(entry),
    /** An alias or `provider/model` to `provider/model`. */
    resolveModelRef(ref: string): string {
      return deps.resolveModel(resolveAlias(ref, config.models.aliases)).ref;
    },
    async start(sink: (adapter: ChannelAdapter) => Parameters<ChannelAdapter["start"]>[0]): Promise<void> {
      // Every agent's store now: a corrupt file is reported and a killed write's temp file removed at start.
      for (const agentId of agentIds()) await sessions.forAgent(agentId);
      // Workspaces and MCP servers first: the first turn reads the one and may call the other.
      for (const agentId of agentIds()) await ensureWorkspace(workspaceOf(agentId));
      await mcp.start();
      // Interrupted messages take their lanes before new traffic arrives.
      const replayed = await pipeline.resume();
      if (replayed > 0) logger.info({ replayed }, "replayed inbound messages a restart interrupted");
      // Adapters next: resumed outbox items need a running adapter to leave through.
      for (const adapter of adapters.values()) await adapter.start(sink(adapter));
      gate.start();
      // Senders approved with `switchboard pairing approve` while no gateway ran learn it now.
      await pairing.announcePending();
      await subagents.recover();
      retention.start();
      if (config.cron.enabled) await cron.start();
      readiness.ready();
    },
    /** False once a stop began: new inbound messages are then refused unstored, so platforms resend them. */
    acceptsInbound: () => !stopping && readiness.phase() !== "draining",
    /**
     * Refuses new inbound, lets running turns finish and their replies go out (both within
     * `drainMs`; what is left stays in the outbox for the next start), then stops adapters and
     * writes every store in full.
     */
    async stop(drainMs = 10_000): Promise<void> {
      stopping = true;
      readiness.draining();
      // One budget for the whole drain: cron, turns, hook announces and deliveries share it.
      const deadline = Date.now() + drainMs;
      const left = () => Math.max(0, deadline - Date.now());
      await cron.stop(left());
      let timer: NodeJS.Timeout | undefined;
      // Turns, then what hook turns hand over after theirs ended (their announce).
      const turnsDone = lanes.idle().then(() => hooks.idle());
      await Promise.race([turnsDone, new Promise((resolve) => (timer = setTimeout(resolve, left())))]);
      clearTimeout(timer);
      const undelivered = await gate.drain(left());
      if (undelivered > 0)
        logger.warn(
          { pending: undelivered },
          "stopping with messages not delivered yet; they go out at the next start",
        );
      for (const adapter of adapters.values())
        await adapter.stop().catch((err: unknown) => logger.warn({ channel: adapter.id, err }, "adapter stop failed"));
      // Messages whose turns this stop cut off were not the ones that crashed the gateway.
      await inbox
        .forgiveInterruptedStarts()
        .catch((err: unknown) => logger.warn({ err }, "inbox start counts not kept"));
      await subagents.close();
      await retention.stop();
      await mcp.close();
      await gate.stop();
      // Each state file is written in full, so after a stop it alone is exact (docs/performance.md).
      await sessions.close();
      await outbox.close();
      await inbox.close();
      await pairingStore.close();
      // The stores are closed; the port closes whatever table is left.
      await state.close();
    },
  };
}

/** The gateway's wired state. */
export type GatewayCore = Awaited<ReturnType<typeof createGatewayCore>>;
