import { resolveAlias } from "../agents/models/index.js";
import type { AgentRuntime } from "../agents/agent-runtime.js";
import type { ResolvedModel } from "../agents/models/index.js";
import type { Config } from "../config/schema/index.js";
import type { TargetCodec } from "../delivery/channel-adapter.js";
import type { Deliver } from "../delivery/delivery-request.js";
import { openCron } from "../cron/open-cron.js";
import type { AutomationDeps } from "../cron/run-announced-turn.js";
import { hookTurnRunner } from "../hooks/hook-runner.js";
import { createHooksHandler } from "../hooks/hooks-handler.js";
import type { StoredTurns } from "../inbound/stored-turns.js";
import type { Logger } from "../logger.js";
import type { AgentSessionsPool } from "../sessions/agent-sessions.js";
import type { StatePort } from "../state/state-port.js";
import type { CoreKeys } from "./core-keys.js";
import { originRefusal } from "./request-guard.js";

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
  /** the inbox's stored turns: hooks store theirs there, and the hook runner replays them */
  turns: Pick<StoredTurns, "start" | "register">;
  targetsOf: (channel: string) => TargetCodec | undefined;
  resolveModel: (ref: string) => ResolvedModel;
  logger: Logger;
  now: () => number;
  /** whether the state's storage answers: a hook is refused (503) while it does not */
  storageHealth: () => { ok: boolean; reason?: string };
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
  const cron = await openCron({ home: deps.home, state: deps.state, config: config.cron, ...shared });
  deps.turns.register("hook", hookTurnRunner(shared));
  const hooks = createHooksHandler({
    config: config.hooks,
    ...shared,
    startTurn: deps.turns.start,
    agentIds: keys.agentIds,
    defaultAgentId: keys.defaultAgentId,
    resolveModelRef: (ref) => deps.resolveModel(resolveAlias(ref, config.models.aliases)).ref,
    originRefusal: (req) => originRefusal(req, config.gateway.allowedOrigins),
    trustedProxies: config.gateway.trustedProxies,
    storageHealth: deps.storageHealth,
  });
  return { cron, hooks };
}
