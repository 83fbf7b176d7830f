import { resolveAlias } from "../agents/models/index.js";
import type { AgentRuntime } from "../agents/agent-runtime.js";
import type { RunRegistry } from "../agents/run-registry.js";
import type { ResolvedModel } from "../agents/models/index.js";
import type { Config } from "../config/schema/index.js";
import type { TargetCodec } from "../delivery/channel-adapter.js";
import type { Deliver } from "../delivery/delivery-request.js";
import { openCron } from "../cron/open-cron.js";
import type { AutomationDeps } from "../cron/run-announced-turn.js";
import { postgresHookAuthLimiter } from "../cluster/hook-auth-sql.js";
import { hookTurnRunner } from "../hooks/hook-runner.js";
import { storedRunId } from "../agents/uuid-v5.js";
import { type HooksHandlerDeps, createHooksHandler } from "../hooks/hooks-handler.js";
import type { StoredTurns } from "../inbound/stored-turns.js";
import type { Logger } from "../logger.js";
import type { AgentSessionsPool } from "../sessions/agent-sessions.js";
import { announceOfRun } from "../cluster/run-results-sql.js";
import type { PostgresDatabase } from "../state/postgres/database.js";
import type { StatePort } from "../state/state-port.js";
import type { CoreKeys } from "./core-keys.js";

/** What cron and hooks are wired from. */
export interface CoreAutomationDeps {
  config: Config;
  home: string;
  /** the gateway's one state port (cron jobs are a table of it) */
  state: StatePort;
  runtime: AgentRuntime;
  sessions: AgentSessionsPool;
  deliver: Deliver;
  keys: CoreKeys;
  /** the inbox's stored turns: hooks and cron runs store theirs there, and their runners replay them */
  turns: Pick<StoredTurns, "start" | "register">;
  /** runs by id: cron reads a run's outcome there (on PostgreSQL also from `run_results`), and ends a removed job's replay there */
  runs: Pick<RunRegistry, "find" | "waitFor" | "get" | "create" | "finish">;
  /** whether an outbox item of this id exists (a cron run's announce handed over) */
  handedOver: (id: string) => boolean;
  /** whether the inbox marked the stored turn of this run done (a cron run that ran, its outcome not recorded) */
  handledRun: (runId: string) => boolean;
  targetsOf: (channel: string) => TargetCodec | undefined;
  resolveModel: (ref: string) => ResolvedModel;
  logger: Logger;
  now: () => number;
  /** whether the state's storage answers: a hook is refused (503) while it does not */
  storageHealth: () => { ok: boolean; reason?: string };
  /** before a hook's turn is stored (on PostgreSQL: the hand-off inbox is drained first, src/gateway/handoff-drain.ts) */
  beforeHookStore?: () => Promise<void>;
  /** on PostgreSQL: the hooks' lockout is kept there, one for every gateway of the schema */
  database?: Pick<PostgresDatabase, "pool"> | undefined;
}

/** What {@link hooksFromConfig} needs besides the config. */
export interface ConfiguredHooksDeps
  extends Pick<
    HooksHandlerDeps,
    "targetsOf" | "logger" | "now" | "startTurn" | "storageHealth" | "beforeStore" | "authLimiter"
  > {
  keys: Pick<CoreKeys, "parseKey" | "mainKeyOf" | "agentIds" | "defaultAgentId">;
  resolveModel: (ref: string) => ResolvedModel;
}

/**
 * The webhook handler as `config` sets it up: the owner's and a standby's are built here alike
 * (a standby stores the turn for the owner instead: its own `startTurn`), so both check the same.
 */
export function hooksFromConfig(config: Config, deps: ConfiguredHooksDeps) {
  const { keys } = deps;
  return createHooksHandler({
    config: config.hooks,
    parseKey: keys.parseKey,
    mainKeyOf: keys.mainKeyOf,
    targetsOf: deps.targetsOf,
    logger: deps.logger,
    now: deps.now,
    startTurn: deps.startTurn,
    agentIds: keys.agentIds,
    defaultAgentId: keys.defaultAgentId,
    resolveModelRef: (ref) => deps.resolveModel(resolveAlias(ref, config.models.aliases)).ref,
    trustedProxies: config.gateway.trustedProxies,
    ...(deps.storageHealth && { storageHealth: deps.storageHealth }),
    ...(deps.beforeStore && { beforeStore: deps.beforeStore }),
    ...(deps.authLimiter && { authLimiter: deps.authLimiter }),
    // Every gateway of the schema derives one key's run id alike (docs/scale-out.md "Inbound on any gateway").
    runIdOf: (dedupeKey) => storedRunId("hook", config.state.postgres.schema, dedupeKey),
  });
}

/** The cron scheduler and the webhook handler: turns the gateway starts itself, their results delivered like any reply. */
export async function openCoreAutomation(deps: CoreAutomationDeps) {
  const { config, runtime, sessions, deliver, keys, targetsOf, logger, now } = deps;
  // One dependency object for automation, shared by cron and the hooks.
  const shared: AutomationDeps = {
    runtime,
    sessions,
    deliver,
    mainKeyOf: keys.mainKeyOf,
    targetsOf,
    parseKey: keys.parseKey,
    logger,
    now,
  };
  const cron = await openCron({
    ...shared,
    home: deps.home,
    state: deps.state,
    config: config.cron,
    turns: deps.turns,
    runs: deps.runs,
    handedOver: deps.handedOver,
    handledRun: deps.handledRun,
    ...(deps.database && { announceOf: (runId: string) => announceOfRun(deps.database!.pool, runId) }),
    // Every gateway of the schema derives one due time's run id alike, as hooks do theirs.
    scope: config.state.postgres.schema,
  });
  deps.turns.register("hook", hookTurnRunner(shared));
  const hooks = hooksFromConfig(config, {
    ...shared,
    keys,
    startTurn: deps.turns.start,
    resolveModel: deps.resolveModel,
    storageHealth: deps.storageHealth,
    ...(deps.beforeHookStore && { beforeStore: deps.beforeHookStore }),
    ...(deps.database && { authLimiter: postgresHookAuthLimiter(() => deps.database!.pool) }),
  });
  return { cron, hooks };
}
