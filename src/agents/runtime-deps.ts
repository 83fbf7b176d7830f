import type { ToolSet } from "ai";
import type { Config } from "../config/schema/index.js";
import type { CapabilitiesOf } from "../delivery/capabilities-of.js";
import type { Deliver } from "../delivery/delivery-request.js";
import type { Logger } from "../logger.js";
import type { AgentSessionsPool } from "../sessions/agent-sessions.js";
import type { DeliveryContext } from "../sessions/session-entry.js";
import type { Lanes } from "./lanes.js";
import type { QueueTimers } from "./queue/wait-quiet.js";
import type { ResolvedModel } from "./models/index.js";
import type { RunRegistry } from "./run-registry.js";
import type { ToolRecord } from "./tool-record.js";
import type { RuntimeEvent, ToolContext } from "./turn-request.js";
import type { PromptFileReader } from "./workspace/prompt-files.js";
import type { Workspace } from "../workspace/workspace-port.js";

/** Dependencies of `createAgentRuntime`. */
export interface AgentRuntimeDeps {
  config: Config;
  sessions: AgentSessionsPool;
  lanes: Lanes;
  runs: RunRegistry;
  resolveModel: (ref: string) => ResolvedModel;
  deliver: Deliver;
  /** the tools of a turn; may wait a moment (MCP servers still in their first connect) */
  tools?: (context: ToolContext) => ToolSet | Promise<ToolSet>;
  /** the durable record of tool calls: each call is recorded before the model sees it, and a replayed turn answered from it; default none */
  toolRecord?: ToolRecord;
  logger: Logger;
  onEvent?: (event: RuntimeEvent) => void;
  /** the workspace of an agent (prompt files, memory flush); default none */
  workspaceOf?: (agentId: string, sessionKey?: string) => Workspace | undefined;
  /** starts the target chat's typing indicator for the length of a run; returns its stop */
  typing?: (target: DeliveryContext) => () => void;
  /** what each channel's adapter declared (typing); default: every channel is tried */
  capabilitiesOf?: CapabilitiesOf;
  /** turns answering channel messages that run at once, across sessions; default `agents.defaults.maxConcurrent` */
  chatTurnsAtOnce?: number;
  /** the timers `collect` debounces on; default the process's */
  queueTimers?: QueueTimers;
  now?: () => number;
}

/** What the steps of a turn share: the runtime's dependencies and its workspace file cache. */
export interface TurnEnv extends AgentRuntimeDeps {
  /** workspace files, kept between turns and read again only when a stat shows a change */
  readFiles: PromptFileReader;
}
