import { agentRun, agentWait, agentsList } from "./methods/agent-methods.js";
import { chatAbort, chatHistory, chatSend } from "./methods/chat-methods.js";
import { cronAdd, cronList, cronRemove, cronRun, cronRuns, cronUpdate } from "./methods/cron-methods.js";
import { inboxDrop, inboxList, inboxRetry } from "./methods/inbox-methods.js";
import type { GatewayMethod } from "./methods/method.js";
import {
  sessionsDelete,
  sessionsList,
  sessionsPatch,
  sessionsReset,
  sessionsResolve,
} from "./methods/session-methods.js";
import { commandsList, sessionsCreate, sessionsGet, subagentsStop } from "./methods/session-panel-methods.js";
import { statusMethod } from "./methods/status-method.js";
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
      subscribeMethod,
      cronList,
      cronAdd,
      cronUpdate,
      cronRemove,
      cronRun,
      cronRuns,
      inboxList,
      inboxRetry,
      inboxDrop,
    ] as GatewayMethod[]
  ).map((method) => [method.name, method]),
);
