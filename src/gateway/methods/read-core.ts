// What the reads a standby answers itself (docs/scale-out.md "Reads on a standby") take of a
// gateway core: the owner passes its own core (its image), a standby a core of committed rows read
// from PostgreSQL (../standby-reads.ts). One handler each, so both answers have one shape.
import type { RunRegistry } from "../../agents/run-registry.js";
import type { Config } from "../../config/schema/index.js";
import type { SessionStore } from "../../sessions/session-store.js";
import type { Transcripts } from "../../sessions/transcripts/index.js";
import type { SubagentRecord } from "../../tools/subagent-registry.js";
import type { GatewayCore } from "../gateway-core.js";

/** One agent's sessions as `sessions.list`, `sessions.resolve` and `chat.history` read them. */
export interface SessionReadsOf {
  store: Pick<SessionStore, "get" | "select">;
  transcripts: Pick<Transcripts, "readTail">;
}

/** What `sessions.list`, `sessions.resolve` and `chat.history` read. */
export interface SessionReadCore extends Pick<GatewayCore, "parseKey" | "agentIds" | "clientChannel"> {
  sessions: { forAgent(agentId: string): Promise<SessionReadsOf> };
  subagents: { byChild(childKey: string): Pick<SubagentRecord, "task"> | undefined };
}

/** What `agent.wait` reads: runs in memory, else their stored end (PostgreSQL). */
export interface RunReadCore {
  runs: Pick<RunRegistry, "find" | "waitFor" | "get">;
}

/**
 * What `sessions.get` reads: the session reads, the config, and what the session's owner knows in
 * memory (lanes, active runs, sub-agents, replies waiting): a core holding only some partitions
 * reads another's session from committed rows, with that memory empty (../partial-methods.ts).
 */
export interface SessionPanelCore extends SessionReadCore {
  config: Config;
  lanes: Pick<GatewayCore["lanes"], "busy" | "queued">;
  runs: Pick<GatewayCore["runs"], "active">;
  subagents: SessionReadCore["subagents"] & Pick<GatewayCore["subagents"], "list">;
  gate: Pick<GatewayCore["gate"], "pendingItems" | "failures">;
}
