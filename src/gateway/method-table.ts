import { agentRun, agentWait, agentsList } from "./methods/agent-methods.js";
import { chatAbort, chatHistory, chatSend } from "./methods/chat-methods.js";
import { clusterStatus } from "./methods/cluster-method.js";
import { cronAdd, cronList, cronRemove, cronRun, cronRuns, cronUpdate } from "./methods/cron-methods.js";
import { inboxDrop, inboxList, inboxRetry } from "./methods/inbox-methods.js";
import type { GatewayMethod } from "./methods/method.js";
import { pairingApprove, pairingDeny, pairingList } from "./methods/pairing-methods.js";
import {
  sessionsDelete,
  sessionsList,
  sessionsPatch,
  sessionsReset,
  sessionsResolve,
} from "./methods/session-methods.js";
import { commandsList, sessionsCreate, sessionsGet, subagentsStop } from "./methods/session-panel-methods.js";
import { sessionsPrune } from "./methods/prune-method.js";
import { statusMethod } from "./methods/status-method.js";
import { healthMethod } from "./methods/health-method.js";
import { subscribeMethod } from "./methods/subscribe-method.js";
import { toolsInvoke } from "./methods/tools-method.js";

/** Every method the gateway answers, by name. */
export const METHODS: ReadonlyMap<string, GatewayMethod> = new Map(
  (
    [
      sessionsList,
      sessionsResolve,
      sessionsPatch,
      sessionsReset,
      sessionsDelete,
      sessionsPrune,
      sessionsGet,
      sessionsCreate,
      subagentsStop,
      commandsList,
      chatHistory,
      chatSend,
      chatAbort,
      agentRun,
      agentWait,
      agentsList,
      toolsInvoke,
      statusMethod,
      healthMethod,
      subscribeMethod,
      cronList,
      cronAdd,
      cronUpdate,
      cronRemove,
      cronRun,
      cronRuns,
      pairingList,
      pairingApprove,
      pairingDeny,
      inboxList,
      inboxRetry,
      inboxDrop,
      clusterStatus,
    ] as GatewayMethod[]
  ).map((method) => [method.name, method]),
);
