import { z } from "zod";
import type { AgentRuntime } from "../agents/agent-runtime.js";
import { SUBAGENT_OUTCOMES } from "../agents/run-end.js";
import type { GateTimers } from "../delivery/gate-timer.js";
import type { Logger } from "../logger.js";
import type { AgentSessionsPool } from "../sessions/agent-sessions.js";
import { DeliveryContextSchema } from "../sessions/session-entry.js";
import type { StatePort } from "../state/state-port.js";

/** One sub-agent run, persisted so announces survive restarts. */
export const SubagentRecordSchema = z.object({
  runId: z.string(),
  /** the sessions_spawn call that started it (`ToolCaller.callId`): a replayed call finds this run instead of spawning again */
  callId: z.string().optional(),
  childSessionKey: z.string(),
  childAgentId: z.string(),
  requesterKey: z.string(),
  /** where the announce goes: the requester's chat, captured at spawn time */
  origin: DeliveryContextSchema,
  task: z.string(),
  label: z.string().optional(),
  cleanup: z.enum(["keep", "delete"]),
  state: z.enum(["running", "ended", "announced", "archived"]),
  /** stored by its spawn turn, its run not started yet: a restart replays that turn (it runs), not an interrupted run */
  queued: z.literal(true).optional(),
  /** when a stop was asked (`/stop`, `/subagents stop`): a replay of its spawn runs nothing, a restart records it stopped */
  stopAskedAt: z.number().optional(),
  createdAt: z.number(),
  startedAt: z.number().optional(),
  endedAt: z.number().optional(),
  outcome: z.enum(SUBAGENT_OUTCOMES).optional(),
  error: z.string().optional(),
  result: z.string().optional(),
  /** token usage of the task run (the announce step's own usage is not counted) */
  usage: z
    .object({
      inputTokens: z.number().optional(),
      outputTokens: z.number().optional(),
      totalTokens: z.number().optional(),
    })
    .optional(),
  announcedAt: z.number().optional(),
  archiveAt: z.number().optional(),
});
export type SubagentRecord = z.infer<typeof SubagentRecordSchema>;

/** A sub-agent's announce as it is handed to its requester (kept in its history, delivered to `target`). */
export interface AnnounceHandOver {
  /** `announce:<runId>`: the announce's dedupe key and its delivery's idempotency key */
  id: string;
  requesterKey: string;
  /** the agent whose transcript keeps it: the requester's, else the child's */
  agentId: string;
  target: SubagentRecord["origin"];
  text: string;
}

/** Dependencies of `createSubagentRegistry`. */
export interface SubagentRegistryDeps {
  /** where the registry's table is kept */
  state: StatePort;
  /** e.g. `$SWITCHBOARD_HOME/state/subagents.json` */
  path: string;
  sessions: AgentSessionsPool;
  runtime: () => AgentRuntime;
  /** hands an announce to its requester (the gateway: a stored `announce` turn in the requester's inbox) */
  handOver: (announce: AnnounceHandOver) => Promise<void>;
  /** stops a child's run whose stop was written on its record (the gateway: a stored `abort` turn in the child's inbox) */
  stopChild: (record: SubagentRecord) => Promise<void>;
  /** true when the announce of this key was handed over already (before a restart, or by a replay) */
  handedOver: (id: string) => boolean;
  archiveAfterMinutes: number;
  /** `agents.defaults.subagents.announceStats`; default "full" */
  announceStats?: "full" | "brief" | "off";
  /** the channel of the gateway's own clients (on this machine): announces to it show local paths */
  clientChannel?: string;
  logger: Logger;
  now: () => number;
  /** the timers of the recovery's retry backoff; default Node's (unref: a pending retry keeps no process alive) */
  timers?: GateTimers;
}
