// What the reads a standby answers itself (docs/scale-out.md "Reads on a standby") take of a
// gateway core: the owner passes its own core (its image), a standby a core of committed rows read
// from PostgreSQL (../standby-reads.ts). One handler each, so both answers have one shape.
import type { RunRegistry } from "../../agents/run-registry.js";
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
