import { supportsThinking } from "../../agents/models/thinking-options.js";
import { defineCommand } from "../command-definition.js";
import { STRINGS } from "../command-strings.js";
import { patchSession } from "../patch-session.js";
import { sessionModel } from "../session-context.js";

/** `/think [off|minimal|low|medium|high]`: shows or sets the session's thinking level. */
export const thinkCommand = defineCommand({
  name: "think",
  usage: "/think off|minimal|low|medium|high",
  summary:
    "Shows or sets how much this session's model reasons before answering (models that support it); a new session clears it.",
  access: "own-session",
  async run(command, scope) {
    const entry = scope.sessions.store.get(scope.context.sessionKey.key);
    const supported = supportsThinking(sessionModel(scope, entry).ref);
    if (!command.level) return { reply: STRINGS.thinkShown(entry?.thinkingLevel ?? "off", supported) };
    // "off" removes the field (docs/commands.md): no level is the same as off.
    await patchSession(scope, { thinkingLevel: command.level === "off" ? undefined : command.level });
    return { reply: STRINGS.thinkSet(command.level, supported) };
  },
});
