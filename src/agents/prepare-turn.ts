import type { ToolSet } from "ai";
import { type OpenedAgentSessions, transcriptRef } from "../sessions/agent-sessions.js";
import type { TurnStart } from "../sessions/session-lifecycle.js";
import { type TranscriptMessage, isCommandMessage } from "../sessions/transcripts/index.js";
import { autoCompact } from "./compaction/auto-compact.js";
import { COMPACTION_STRINGS } from "./compaction/compaction-strings.js";
import { sinceLastCompaction } from "./compaction-marker.js";
import type { ResolvedModel } from "./models/index.js";
import { toolContextOf } from "./reply-target.js";
import type { TurnEnv } from "./runtime-deps.js";
import { sessionModelRef } from "./session-model.js";
import { joinPromptParts } from "./system-prompt.js";
import type { Turn } from "./turn.js";
import { sendNotice } from "./turn-notices.js";
import { turnPromptParts } from "./turn-prompt.js";
import { isWritable } from "./workspace/ensure-workspace.js";

const HISTORY_LIMIT = 200;

/** The stores of the turn's agent that preparing reads. */
type Opened = Pick<OpenedAgentSessions, "store" | "transcripts">;

/** What a turn runs with: its model, tools, system prompt and the context before its message. */
export interface PreparedTurn {
  resolved: ResolvedModel;
  tools: ToolSet;
  system: string;
  context: TranscriptMessage[];
}

/** The turn's model, tools and system prompt. */
async function turnSetup(env: TurnEnv, turn: Turn, start: TurnStart) {
  const { request } = turn;
  const resolved = env.resolveModel(request.model ?? sessionModelRef(env.config, request.agentId, start.entry));
  const tools = (await env.tools?.(toolContextOf(request, turn.runId, turn.target))) ?? {};
  const workspace = env.workspaceOf?.(request.agentId, request.parsed.key);
  const parts = await turnPromptParts({
    config: env.config,
    agentId: request.agentId,
    sessionKey: request.parsed.key,
    modelRef: resolved.ref,
    message: request.message,
    workspace,
    toolNames: Object.keys(tools),
    extra: request.extraSystemPrompt,
    readFiles: env.readFiles,
  });
  return { resolved, tools, system: joinPromptParts(parts), workspace };
}

/**
 * The transcript the model sees before the turn's message. After a compaction, the summary stands
 * in for everything before it; chat commands and their answers are kept for the chat's history,
 * never shown to the model or counted (as /status counts). A session this turn just started has a
 * new sessionId, so no transcript yet; a replayed turn reads anyway (its first attempt may have written lines).
 */
async function readContext(turn: Turn, start: TurnStart, opened: Opened): Promise<TranscriptMessage[]> {
  if (start.isNew && !turn.request.resumed) return [];
  const recent = await opened.transcripts.recent(transcriptRef(start.entry), HISTORY_LIMIT);
  return sinceLastCompaction(recent.filter((m) => !isCommandMessage(m)));
}

/** Prepares a turn; the session is compacted first when its context grew too big, and its chat told once. */
export async function prepareTurn(env: TurnEnv, turn: Turn, start: TurnStart, opened: Opened): Promise<PreparedTurn> {
  const { resolved, tools, system, workspace } = await turnSetup(env, turn, start);
  const context = await readContext(turn, start, opened);
  const compacted = await autoCompact({
    config: env.config,
    logger: env.logger,
    sessions: opened,
    key: turn.request.parsed.key,
    entry: start.entry,
    messages: context,
    resolved,
    system,
    tools,
    workspaceWritable: async () => workspace !== undefined && (await isWritable(workspace)),
    now: env.now ?? Date.now,
    signal: turn.signal,
  });
  if (!compacted) return { resolved, tools, system, context };
  if (turn.target) {
    await sendNotice(env.deliver, {
      sessionKey: turn.request.parsed,
      entry: start.entry,
      target: turn.target,
      text: COMPACTION_STRINGS.autoCompacted,
      idempotencyKey: `${turn.runId}:compacted`,
    });
  }
  return { resolved, tools, system, context: await readContext(turn, start, opened) };
}
