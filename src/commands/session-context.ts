import { sessionModelRef } from "../agents/agent-runtime.js";
import type { ResolvedModel } from "../agents/models/index.js";
import { transcriptRef } from "../sessions/agent-sessions.js";
import type { SessionEntry } from "../sessions/session-entry.js";
import { type TranscriptMessage, isCommandMessage } from "../sessions/transcripts/index.js";
import type { CommandScope } from "./command-deps.js";
import { sinceLastCompaction } from "../agents/compaction-marker.js";

/** Messages read from a transcript's tail: the agent runtime's history limit. */
const CONTEXT_READ_LIMIT = 200;

/** What the model of a session sees of its transcript: the tail from the last compaction on, without chat commands. */
export async function readModelContext(
  scope: CommandScope,
  entry: SessionEntry | undefined,
): Promise<TranscriptMessage[]> {
  if (!entry) return [];
  const page = await scope.sessions.transcripts.readTail(transcriptRef(entry), {
    limit: CONTEXT_READ_LIMIT,
    includeTools: true,
  });
  return sinceLastCompaction(page.messages.filter((message) => !isCommandMessage(message)));
}

/**
 * The session's model reference and, when it can be built, the model; else the error that stopped
 * it, as thrown (a chat shows it only through the chat edge, `chatErrorText`).
 */
export function sessionModel(
  scope: CommandScope,
  entry: SessionEntry | undefined,
): { ref: string; resolved?: ResolvedModel; failure?: unknown } {
  const ref = sessionModelRef(scope.deps.config, scope.context.agentId, entry);
  try {
    return { ref, resolved: scope.deps.resolveModel(ref) };
  } catch (err) {
    return { ref, failure: err };
  }
}
