import type { ToolSet } from "ai";
import type { Config } from "../config/schema/index.js";
import type { CapabilitiesOf } from "../delivery/capabilities-of.js";
import type { Deliver } from "../delivery/delivery-request.js";
import type { Logger } from "../logger.js";
import type { AgentSessionsPool } from "../sessions/agent-sessions.js";
import type { DeliveryContext } from "../sessions/session-entry.js";
import type { Lanes } from "./lanes.js";
import type { ResolvedModel } from "./models/index.js";
import type { RunRegistry } from "./run-registry.js";
import type { ToolRecord } from "./tool-record.js";
import type { RuntimeEvent, ToolContext } from "./turn-request.js";
import type { PromptFileReader } from "./workspace/prompt-files.js";

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
  workspaceOf?: (agentId: string) => string | undefined;
  /** starts the target chat's typing indicator for the length of a run; returns its stop */
  typing?: (target: DeliveryContext) => () => void;
  /** what each channel's adapter declared (typing); default: every channel is tried */
  capabilitiesOf?: CapabilitiesOf;
  /** turns answering channel messages that run at once, across sessions; default {@link CHAT_TURNS_AT_ONCE} */
  chatTurnsAtOnce?: number;
  now?: () => number;
}

/** What the steps of a turn share: the runtime's dependencies and its workspace file cache. */
export interface TurnEnv extends AgentRuntimeDeps {
  /** workspace files, kept between turns and read again only when a stat shows a change */
  readFiles: PromptFileReader;
}

/**
 * Turns answering channel messages that run at once (from the start of the turn to its reply's
 * delivery); the next one waits at the head of its session's lane. A flood of chats (a backlog
 * after an outage, a bench's 10,000 sessions) then runs a few hundred turns deep instead of all at
 * once: each turn's garbage dies young and its transcript file stays open between its two appends
 * (256 kept open). Turns started by tools, cron, hooks and gateway clients take no slot, and a
 * chat turn gives its slot back while it waits for another session's turn (`waitOutsideSlot`:
 * that turn may be queued behind a chat turn waiting for a slot).
 */
export const CHAT_TURNS_AT_ONCE = 256;
