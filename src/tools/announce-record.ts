import type { Logger } from "../logger.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import { type AgentSessionsPool, transcriptRef } from "../sessions/agent-sessions.js";

/** How many of the newest transcript messages are searched for an announce already kept. */
const RECENT = 200;

/**
 * Keeps a sub-agent's announce in the requester session's transcript (marked `announce`, so no
 * model's context includes it), so it is still in `chat.history` after a reload. Idempotent by
 * `id`: an announce replayed after a restart is not kept twice. A session without an entry has
 * no transcript and keeps nothing; a failed write is logged (the announce is still delivered).
 */
export async function recordAnnounce(
  deps: { sessions: AgentSessionsPool; logger: Logger },
  requester: ParsedSessionKey,
  agentId: string,
  announce: { id: string; text: string },
): Promise<boolean> {
  try {
    const { store, transcripts } = await deps.sessions.forAgent(agentId);
    const entry = store.get(requester.key);
    if (!entry) return false;
    const ref = transcriptRef(entry);
    const { messages } = await transcripts.readTail(ref, { limit: RECENT, includeTools: false });
    if (messages.some((m) => m.announce === true && m.runId === announce.id)) return false;
    await transcripts.append(
      ref,
      { role: "assistant", content: announce.text, runId: announce.id, announce: true },
      { sessionId: entry.sessionId, sessionKey: requester.key },
    );
    return true;
  } catch (err) {
    deps.logger.warn({ sessionKey: requester.key, err }, "announce not kept in the requester's transcript");
    return false;
  }
}
