import type { CapabilitiesOf } from "../delivery/capabilities-of.js";
import type { ToolSet } from "ai";
import type { AgentRuntime, ToolContext } from "../agents/agent-runtime.js";
import type { Lanes } from "../agents/lanes.js";
import type { ResolvedModel } from "../agents/models/index.js";
import type { RunRegistry } from "../agents/run-registry.js";
import type { Config } from "../config/schema/index.js";
import type { DeliveryGate } from "../delivery/delivery-gate.js";
import type { AccountHealth } from "../delivery/channel-adapter.js";
import type { Logger } from "../logger.js";
import type { AgentSessionsPool, OpenedAgentSessions } from "../sessions/agent-sessions.js";
import type { ModelCatalog } from "../sessions/model-selection.js";
import type { RunEnd } from "../agents/run-end.js";
import type { CommandContext } from "./command-context.js";
import type { McpServerStatus } from "../tools/mcp/mcp-manager.js";
import type { PairingControl } from "./pairing-control.js";
import type { Workspace } from "../workspace/workspace-port.js";

/** Where a sub-agent run is: running, or how it ended. */
type SubagentStatus = "running" | RunEnd;

/** One sub-agent a session spawned, as `/subagents` and `/status` show it. */
export interface SubagentInfo {
  runId: string;
  childSessionKey: string;
  label?: string;
  task: string;
  status: SubagentStatus;
  /** ms */
  startedAt: number;
  /** ms; set once it ended */
  endedAt?: number;
}

/** The sub-agents of a requester session (implemented by the tools layer). */
export interface SubagentControl {
  /** The sub-agents `requesterKey` spawned, newest first. */
  list(requesterKey: string): SubagentInfo[];
  /** Stops the running sub-agents of `requesterKey` (or the one with `runId`) and theirs; resolves with how many stopped. */
  stop(requesterKey: string, runId?: string): Promise<number>;
}

/** One scheduled job as `/cron` shows it (times already written for people). */
export interface CronJobInfo {
  id: string;
  name: string;
  /** e.g. `cron "0 8 * * *" Europe/Berlin`, `every 10m`, `at 2026-12-24 18:00 UTC` */
  schedule: string;
  /** e.g. `2026-11-24 08:00 Europe/Berlin`; absent when disabled or finished */
  nextRun?: string;
  enabled: boolean;
  /** ok, error (with why), ... */
  last?: string;
  /** where replies are announced, or "none" */
  announce: string;
}

/** The gateway's scheduled jobs, as owners manage them from chat (implemented by the cron layer). */
export interface CronControl {
  list(): CronJobInfo[];
  /** Runs a job now; its runId once stored. Rejects with a reason a person can read (unknown job, already running). */
  run(id: string): Promise<string>;
  setEnabled(id: string, enabled: boolean): Promise<void>;
  remove(id: string): Promise<boolean>;
}

/** Dependencies of `createCommandDispatcher`; the gateway wires them once. */
export interface CommandDeps {
  config: Config;
  sessions: AgentSessionsPool;
  runtime: Pick<AgentRuntime, "abortSession" | "waiting">;
  lanes: Pick<Lanes, "run" | "busy" | "queued">;
  runs: Pick<RunRegistry, "active">;
  /** recent delivery failures per session, for `/status` */
  gate: Pick<DeliveryGate, "failures" | "pendingItems">;
  resolveModel: (ref: string) => ResolvedModel;
  /** default: none (no sub-agents to list or stop) */
  subagents?: SubagentControl;
  /** the scheduled jobs, for `/cron`; default: none */
  cron?: CronControl;
  /** pairing codes and the senders let in, for `/pair`; default: none */
  pairing?: PairingControl;
  /** the tools a run on a session gets, for `/context`; default: none */
  tools?: (context: ToolContext) => ToolSet | Promise<ToolSet>;
  /**
   * What each channel's adapter declared: `nativeCommands` (where `commands.text: false` turns typed
   * commands into text); default: none
   */
  capabilitiesOf?: CapabilitiesOf;
  /** the models `/new <model>` may pick; default: built from the config */
  catalog?: ModelCatalog;
  /** the workspace of an agent, for `/context`; default none */
  workspaceOf?: (agentId: string) => Workspace | undefined;
  /** how a channel account's connection is doing, for `/status`; default: nothing to show */
  accountHealth?: (channel: string, accountId: string) => AccountHealth | undefined;
  /** how the MCP servers are doing, for `/status`; default none configured */
  mcpStatus?: () => McpServerStatus[];
  /** the inbox's set-aside messages, for `/status`; default none */
  setAside?: () => Array<{ id: string; session?: string | undefined; setAsideAt: number; reason: string }>;
  logger: Logger;
  now?: () => number;
}

/** What a command handler works with: the message and its session, the dependencies, the clock. */
export interface CommandScope {
  context: CommandContext;
  deps: CommandDeps;
  /** the store, transcripts and lifecycle of the context's agent */
  sessions: OpenedAgentSessions;
  catalog: ModelCatalog;
  now: () => number;
}
