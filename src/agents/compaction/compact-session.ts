import { randomUUID } from "node:crypto";
import { type OpenedAgentSessions, transcriptRef } from "../../sessions/agent-sessions.js";
import type { SessionEntry } from "../../sessions/session-entry.js";
import type { TranscriptMessage } from "../../sessions/transcripts/index.js";
import { compactionMessage } from "../compaction-marker.js";
import type { ResolvedModel } from "../models/index.js";
import { summarizeContext } from "./summarize-context.js";

/** What {@link compactSession} works on: the session, its model context and the model that summarizes it. */
export interface CompactSessionInput {
  sessions: Pick<OpenedAgentSessions, "store" | "transcripts">;
  key: string;
  entry: SessionEntry;
  /** the context to replace (from the last compaction on) */
  messages: readonly TranscriptMessage[];
  resolved: ResolvedModel;
  instructions?: string;
  signal?: AbortSignal;
}

/**
 * Summarizes a session's context and appends the summary as a compaction marker (later turns read
 * from it on), counting the compaction on the entry. The caller holds the session's lane.
 */
export async function compactSession(input: CompactSessionInput): Promise<SessionEntry | undefined> {
  const summary = await summarizeContext({
    resolved: input.resolved,
    messages: input.messages,
    instructions: input.instructions ?? "",
    ...(input.signal && { signal: input.signal }),
  });
  await input.sessions.transcripts.append(
    transcriptRef(input.entry),
    compactionMessage(summary, `compact:${randomUUID()}`),
    { sessionId: input.entry.sessionId, sessionKey: input.key },
  );
  return input.sessions.store.patch(input.key, (current) =>
    current ? { compactionCount: (current.compactionCount ?? 0) + 1 } : undefined,
  );
}
