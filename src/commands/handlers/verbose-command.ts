import { defineCommand } from "../command-definition.js";
import { STRINGS } from "../command-strings.js";
import { patchSession } from "../patch-session.js";

/** `/verbose [on|off]`: shows or sets whether tool calls are shown in the chat while a run lasts. */
export const verboseCommand = defineCommand({
  name: "verbose",
  usage: "/verbose on|off",
  summary: "Shows or sets whether each tool call of a run is sent here as a one-line summary; a new session clears it.",
  access: "own-session",
  async run(command, scope) {
    if (command.on === undefined)
      return {
        reply: STRINGS.verboseShown(scope.sessions.store.get(scope.context.sessionKey.key)?.verboseLevel === "on"),
      };
    await patchSession(scope, { verboseLevel: command.on ? "on" : undefined });
    return { reply: STRINGS.verboseSet(command.on) };
  },
});
