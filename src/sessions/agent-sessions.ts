import path from "node:path";
import type { SessionConfig } from "../config/schema/session.js";
import type { Logger } from "../logger.js";
import type { StatePort } from "../state/state-port.js";
import type { SessionEntry } from "./session-entry.js";
import { createSessionLifecycle } from "./session-lifecycle.js";
import { createSessionStore } from "./session-store.js";
import { createTranscripts, type Transcripts, transcriptIdOfFile } from "./transcripts/index.js";

/** Dependencies of {@link openAgentSessions}. */
export interface AgentSessionsDeps {
  agentId: string;
  /** where the store's table is kept (the gateway's one port) */
  state: StatePort;
  /** this agent's `sessions.json` (see `resolveStorePath`); transcripts live next to it */
  storePath: string;
  session: SessionConfig;
  logger: Logger;
  now?: () => number;
  /** where transcripts are kept; default the JSONL files next to the store */
  openTranscripts?: OpenTranscripts;
  /** transcript files kept open between appends; default the transcripts' own (256); the local files only */
  maxOpenTranscripts?: number;
}

/** The transcript id of an entry: the one its recorded `sessionFile` names (a topic session's own), else its session id. */
export function transcriptRef(entry: SessionEntry): string {
  return (entry.sessionFile !== undefined ? transcriptIdOfFile(entry.sessionFile) : null) ?? entry.sessionId;
}

/** Opens an agent's transcripts: the backend's choice (local JSONL files by default). */
export type OpenTranscripts = (agent: {
  agentId: string;
  dir: string;
  logger: Logger;
  now?: () => number;
  /** files kept open between appends (local files only) */
  maxOpenFiles?: number;
}) => Transcripts;

const openLocalTranscripts: OpenTranscripts = ({ dir, logger, now, maxOpenFiles }) =>
  createTranscripts({ dir, logger, ...(now && { now }), ...(maxOpenFiles !== undefined && { maxOpenFiles }) });

/**
 * One agent's sessions, wired together: the store, the transcripts next to it (deleted with their
 * entry) and the lifecycle (reset policy, triggers).
 */
export async function openAgentSessions(deps: AgentSessionsDeps) {
  const transcripts = (deps.openTranscripts ?? openLocalTranscripts)({
    agentId: deps.agentId,
    dir: path.dirname(deps.storePath),
    logger: deps.logger,
    ...(deps.now && { now: deps.now }),
    ...(deps.maxOpenTranscripts !== undefined && { maxOpenFiles: deps.maxOpenTranscripts }),
  });
  const store = await createSessionStore({
    state: deps.state,
    path: deps.storePath,
    keys: { defaultAgentId: deps.agentId, mainKey: deps.session.mainKey, scope: deps.session.scope },
    logger: deps.logger,
    ...(deps.now && { now: deps.now }),
    forgetTranscript: (entry) => transcripts.forget(transcriptRef(entry)),
    removeTranscript: async (entry, { purge, sessionKey }) => {
      const ref = transcriptRef(entry);
      await (purge ? transcripts.purge(ref, { sessionKey }) : transcripts.remove(ref, { sessionKey }));
    },
  });
  const lifecycle = createSessionLifecycle({
    session: deps.session,
    ...(deps.now && { now: deps.now }),
  });
  return { agentId: deps.agentId, store, transcripts, lifecycle };
}

/** One agent's opened sessions. */
export type OpenedAgentSessions = Awaited<ReturnType<typeof openAgentSessions>>;

/** Opens each agent's sessions once, on first use, and hands the same objects out after that. */
export function createAgentSessionsPool(
  deps: Omit<AgentSessionsDeps, "agentId" | "storePath"> & { storePathFor: (agentId: string) => string },
) {
  const opened = new Map<string, Promise<OpenedAgentSessions>>();
  return {
    forAgent(agentId: string): Promise<OpenedAgentSessions> {
      let sessions = opened.get(agentId);
      if (!sessions) {
        const { storePathFor, ...rest } = deps;
        sessions = openAgentSessions({ ...rest, agentId, storePath: storePathFor(agentId) });
        opened.set(agentId, sessions);
        sessions.catch(() => opened.delete(agentId)); // a failed open is retried next time
      }
      return sessions;
    },
    /** The agents opened so far. */
    async all(): Promise<OpenedAgentSessions[]> {
      return Promise.all(opened.values());
    },
    /** Waits until every store has written everything. */
    async flush(): Promise<void> {
      await Promise.all((await this.all()).map((s) => s.store.flush()));
    },
    /** Writes every store's `sessions.json` in full and closes the transcript files kept open (at a clean stop). */
    async close(): Promise<void> {
      await Promise.all((await this.all()).map(async (s) => Promise.all([s.store.close(), s.transcripts.close()])));
    },
  };
}

/** The pool of every agent's sessions. */
export type AgentSessionsPool = ReturnType<typeof createAgentSessionsPool>;
