import type { ToolSet } from "ai";
import type { Config } from "../../config/schema/index.js";
import type { Logger } from "../../logger.js";
import type { OpenedAgentSessions } from "../../sessions/agent-sessions.js";
import type { SessionEntry } from "../../sessions/session-entry.js";
import type { TranscriptMessage } from "../../sessions/transcripts/index.js";
import { isCompactionMarker } from "../compaction-marker.js";
import type { ResolvedModel } from "../models/index.js";
import { contextWindowOf } from "../models/context-window.js";
import { runAgentTurn } from "../run-agent-turn.js";
import { compactSession } from "./compact-session.js";
import { COMPACTION_STRINGS } from "./compaction-strings.js";
import { compactionLimit } from "./compaction-threshold.js";
import { contextSize } from "./context-size.js";

/** What {@link autoCompact} needs from the turn about to run. */
export interface AutoCompactInput {
  config: Config;
  logger: Logger;
  sessions: Pick<OpenedAgentSessions, "store" | "transcripts">;
  key: string;
  entry: SessionEntry;
  /** the model context, from the last compaction on */
  messages: readonly TranscriptMessage[];
  resolved: ResolvedModel;
  /** the turn's system prompt and tools, for the memory flush turn */
  system: string;
  tools: ToolSet;
  /** whether the agent's workspace exists and can be written; asked only when a compaction is due */
  workspaceWritable: () => Promise<boolean>;
  now: () => number;
  signal?: AbortSignal;
}

/** The memory file a flush on day `now` writes: `memory/YYYY-MM-DD.md` (UTC). */
function memoryFileOf(now: number): string {
  return `memory/${new Date(now).toISOString().slice(0, 10)}.md`;
}

/** True when the session's context has passed its model's compaction limit. */
function needsCompaction(config: Config, ref: string, messages: readonly TranscriptMessage[]): boolean {
  if (!config.agents.defaults.compaction.enabled || !messages.some((m) => !isCompactionMarker(m))) return false;
  return contextSize(messages).tokens >= compactionLimit(config, contextWindowOf(config, ref));
}

async function mayFlush(input: AutoCompactInput): Promise<boolean> {
  const { entry, config, resolved } = input;
  const flushedThisCycle = entry.memoryFlushCompactionCount === (entry.compactionCount ?? 0);
  if (!config.agents.defaults.compaction.memoryFlush.enabled || resolved.offline || flushedThisCycle) return false;
  return ("write" in input.tools || "edit" in input.tools) && (await input.workspaceWritable());
}

/** The tools a memory flush may use: the workspace file tools only (it must not message anyone). */
const FLUSH_TOOLS: readonly string[] = ["read", "write", "edit", "list"];

// One silent turn: nothing is appended to the transcript and nothing is delivered.
async function memoryFlush(input: AutoCompactInput): Promise<void> {
  const file = memoryFileOf(input.now());
  const tools: ToolSet = Object.fromEntries(Object.entries(input.tools).filter(([name]) => FLUSH_TOOLS.includes(name)));
  try {
    await runAgentTurn({
      model: input.resolved.model,
      system: input.system,
      history: input.messages,
      prompt: COMPACTION_STRINGS.memoryFlush(file),
      tools,
      maxSteps: input.config.models.maxSteps,
      ...(input.signal && { signal: input.signal }),
    });
  } catch (err) {
    if (input.signal?.aborted) throw err;
    // The compaction goes ahead without the notes: a failed flush must not block the person's turn.
    input.logger.warn({ sessionKey: input.key, err }, "memory flush failed");
  }
  await input.sessions.store.patch(input.key, (current) =>
    current ? { memoryFlushAt: input.now(), memoryFlushCompactionCount: current.compactionCount ?? 0 } : undefined,
  );
}

/**
 * Compacts a session before a turn when its context passed the limit, as `/compact` does, after
 * one memory flush turn when the workspace is writable (at most one per compaction cycle).
 * Resolves true when it compacted. A failed compaction is logged and the turn goes on.
 */
export async function autoCompact(input: AutoCompactInput): Promise<boolean> {
  if (!needsCompaction(input.config, input.resolved.ref, input.messages)) return false;
  if (await mayFlush(input)) await memoryFlush(input);
  try {
    const entry = input.sessions.store.get(input.key) ?? input.entry;
    await compactSession({
      sessions: input.sessions,
      key: input.key,
      entry,
      messages: input.messages,
      resolved: input.resolved,
      ...(input.signal && { signal: input.signal }),
    });
    input.logger.info(
      { sessionKey: input.key, tokens: contextSize(input.messages).tokens },
      "context compacted automatically",
    );
    return true;
  } catch (err) {
    if (input.signal?.aborted) throw err;
    input.logger.warn({ sessionKey: input.key, err }, "automatic compaction failed");
    return false;
  }
}
