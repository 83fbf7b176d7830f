import { sessionModelRef } from "../agents/agent-runtime.js";
import type { ResolvedModel } from "../agents/models/index.js";
import { transcriptRef } from "../sessions/agent-sessions.js";
import type { SessionEntry } from "../sessions/session-entry.js";
import { type TranscriptMessage, type Transcripts, isCommandMessage } from "../sessions/transcripts/index.js";
import type { CommandScope } from "./command-deps.js";
import { sinceLastCompaction } from "../agents/compaction-marker.js";
import { formatTokens } from "./command-format.js";
import { contextSize } from "./context-size.js";

/** What the context is read from: a session's transcripts (its owner's, or committed rows). */
type ContextSource = { transcripts: Pick<Transcripts, "readTail"> };

/** Messages read from a transcript's tail: the agent runtime's history limit. */
const CONTEXT_READ_LIMIT = 200;

/** What the model of a session sees of its transcript: the tail from the last compaction on, without chat commands. */
export async function readModelContext(
  sessions: ContextSource,
  entry: SessionEntry | undefined,
): Promise<TranscriptMessage[]> {
  if (!entry) return [];
  const page = await sessions.transcripts.readTail(transcriptRef(entry), {
    limit: CONTEXT_READ_LIMIT,
    includeTools: true,
  });
  return sinceLastCompaction(page.messages.filter((message) => !isCommandMessage(message)));
}

/** How full a session's context is, as `/status` and the control UI's panel both show it. */
export interface ContextEstimate {
  /** estimated tokens of what the model sees of the transcript */
  tokens: number;
  messages: number;
  /** the model's context window, in tokens */
  window: number;
  /** e.g. `~2.5k of 32k tokens in 12 messages` */
  text: string;
}

/** The one context estimate: the model's view of the transcript (see {@link readModelContext}) measured against `window`. */
export async function estimateContext(
  sessions: ContextSource,
  entry: SessionEntry | undefined,
  window: number,
): Promise<ContextEstimate> {
  const size = contextSize(await readModelContext(sessions, entry));
  const text = `~${formatTokens(size.tokens)} of ${formatTokens(window)} tokens in ${size.messages} messages`;
  return { tokens: size.tokens, messages: size.messages, window, text };
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
