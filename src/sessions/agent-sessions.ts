import path from "node:path";
import type { SessionConfig } from "../config/schema/session.js";
import type { Logger } from "../logger.js";
import type { ModelCatalog } from "./model-selection.js";
import type { SessionEntry } from "./session-entry.js";
import { createSessionLifecycle } from "./session-lifecycle.js";
import { createSessionStore } from "./session-store.js";
import { createTranscripts } from "./transcripts/index.js";

/** Dependencies of {@link openAgentSessions}. */
export interface AgentSessionsDeps {
  agentId: string;
  /** this agent's `sessions.json` (see `resolveStorePath`); transcripts live next to it */
  storePath: string;
  session: SessionConfig;
  logger: Logger;
  catalog?: ModelCatalog;
  now?: () => number;
}

/** The transcript of an entry: its recorded file, else `<sessionId>.jsonl`. */
export function transcriptRef(entry: SessionEntry): string {
  return entry.sessionFile ?? entry.sessionId;
}

/**
 * One agent's sessions, wired together: the store, the transcripts next to it (deleted with their
 * entry) and the lifecycle (reset policy, triggers).
 */
export async function openAgentSessions(deps: AgentSessionsDeps) {
  const transcripts = createTranscripts({ dir: path.dirname(deps.storePath), logger: deps.logger, ...(deps.now && { now: deps.now }) });
  const store = await createSessionStore({
    path: deps.storePath,
    keys: { defaultAgentId: deps.agentId, mainKey: deps.session.mainKey, scope: deps.session.scope },
    logger: deps.logger,
    ...(deps.now && { now: deps.now }),
    removeTranscript: async (entry) => void (await transcripts.remove(transcriptRef(entry))),
  });
  const lifecycle = createSessionLifecycle({ session: deps.session, ...(deps.catalog && { catalog: deps.catalog }), ...(deps.now && { now: deps.now }) });
  return { agentId: deps.agentId, store, transcripts, lifecycle };
}
