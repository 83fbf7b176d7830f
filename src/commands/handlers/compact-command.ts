import { defineCommand } from "../command-definition.js";
import { formatTokens } from "../command-format.js";
import { STRINGS } from "../command-strings.js";
import { isCompactionMarker } from "../../agents/compaction-marker.js";
import { contextSize } from "../context-size.js";
import { readModelContext, sessionModel } from "../session-context.js";
import { compactSession } from "../../agents/compaction/compact-session.js";

/**
 * `/compact [instructions]`: the session's model summarizes its context; the summary is appended
 * to the transcript as a compaction marker that later turns read instead of what came before.
 * Runs on the session's lane, so no turn starts meanwhile; refused while a turn runs.
 */
export const compactCommand = defineCommand({
  name: "compact",
  usage: "/compact [instructions]",
  summary:
    "Summarizes the session's context with its model and continues from the summary (instructions say what to keep); the transcript keeps everything.",
  access: "own-session",
  async run(command, scope) {
    const { context, deps, sessions } = scope;
    const key = context.sessionKey.key;
    if (deps.lanes.busy(key)) return { reply: STRINGS.compactBusy };
    return deps.lanes.run(key, async () => {
      const entry = sessions.store.get(key);
      const messages = await readModelContext(scope.sessions, entry);
      if (!entry || !messages.some((m) => !isCompactionMarker(m))) return { reply: STRINGS.compactNothing };
      const { resolved, failure } = sessionModel(scope, entry);
      // Thrown as it is: the dispatcher's chat edge says a known error's message, and apologizes for a bug.
      if (!resolved) throw failure;
      const updated = await compactSession({
        sessions,
        key,
        entry,
        messages,
        resolved,
        instructions: command.instructions,
        signal: AbortSignal.timeout(deps.config.models.timeoutSeconds * 1000),
      });
      const before = contextSize(messages);
      const after = contextSize(await readModelContext(scope.sessions, updated));
      return {
        reply: STRINGS.compacted(
          { messages: before.messages, tokens: formatTokens(before.tokens) },
          { tokens: formatTokens(after.tokens) },
          updated?.compactionCount ?? 1,
        ),
      };
    });
  },
});
