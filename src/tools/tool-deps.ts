import type { ToolSet } from "ai";
import type { AgentRuntime } from "../agents/agent-runtime.js";
import type { StartTurn, StoredTurnLookup } from "../agents/stored-turn.js";
import type { Deliver } from "../delivery/delivery-request.js";
import type { RunRegistry } from "../agents/run-registry.js";
import type { Config } from "../config/schema/index.js";
import type { Logger } from "../logger.js";
import type { KeyContext } from "../routing/parse-session-key.js";
import type { AgentSessionsPool } from "../sessions/agent-sessions.js";
import type { ModelCatalog } from "../sessions/model-selection.js";
import type { SessionEntry } from "../sessions/session-entry.js";
import type { SubagentRegistry } from "./subagent-registry.js";
import type { Workspace } from "../workspace/workspace-port.js";

/** What the session tools work with; the gateway wires it once. */
export interface ToolDeps {
  config: Config;
  sessions: AgentSessionsPool;
  runtime: AgentRuntime;
  /** stores a turn in its session's inbox, then runs it (`sessions_send`: a crash replays it) */
  startTurn: StartTurn;
  /** whether a turn is stored under a dedupe key, and the retried store of a flow's next step (`src/inbound/stored-turns.ts`) */
  turns: StoredTurnLookup;
  runs: RunRegistry;
  /**
   * The channel of the gateway's own clients (the adapter declaring `gatewayClients`): a
   * sub-agent's announce goes there when its requester session has no chat route.
   */
  clientChannel: string;
  /** the delivery gate: announces leave through it */
  deliver: Deliver;
  subagents: SubagentRegistry;
  keys: Required<Pick<KeyContext, "defaultAgentId" | "mainKey" | "scope">>;
  /** configured agent ids (`main` when none are listed) */
  agentIds: () => string[];
  catalog: ModelCatalog;
  logger: Logger;
  now: () => number;
  /** the workspace of an agent, for the file tools; default: none (no file tools) */
  workspaceOf?: (agentId: string, sessionKey?: string) => Workspace | undefined;
  /** connected MCP servers; default: none */
  mcp?: { tools(): ToolSet };
  /** the agent of the session that spawned sub-agent session `childKey`, when known */
  parentAgentOf?: (childKey: string) => string | undefined;
  /** the effective tool names of an agent's sessions, for agents_list */
  toolNamesFor?: (agentId: string) => string[];
  /**
   * `cluster.owners: "many"`: the entry of a session whose partition another gateway holds (its
   * committed row; the sessions store holds this core's partitions only); default none
   */
  sessionElsewhere?: (agentId: string, key: string) => Promise<SessionEntry | undefined>;
}
