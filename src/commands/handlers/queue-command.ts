import { resolveQueueSettings } from "../../agents/queue/queue-settings.js";
import type { CommandScope } from "../command-deps.js";
import { defineCommand } from "../command-definition.js";
import { STRINGS } from "../command-strings.js";
import { patchSession } from "../patch-session.js";

/** Where a session's queue mode comes from, in the words `/queue` shows. */
const FROM = {
  session: "set here with /queue",
  agent: "session.queue.agents",
  channel: "session.queue.channels",
  default: "session.queue",
} as const;

/** The session's queue settings and the line that shows them. */
function shown(scope: CommandScope): string {
  const { context, deps, sessions } = scope;
  const settings = resolveQueueSettings(deps.config, {
    agentId: context.agentId,
    channel: context.message.channel,
    accountId: context.message.accountId,
    entry: sessions.store.get(context.sessionKey.key),
  });
  return STRINGS.queueShown({ ...settings, from: FROM[settings.source] });
}

/** `/queue [followup|collect|steer|interrupt|inherit]`: shows or sets how messages that arrive during a turn are answered here. */
export const queueCommand = defineCommand({
  name: "queue",
  usage: "/queue followup|collect|steer|interrupt|inherit",
  summary:
    "Shows or sets how this session answers messages that arrive while a turn runs: each its own turn (followup), one turn for all (collect), given to the running turn (steer) or aborting it (interrupt); inherit goes back to session.queue. A new session clears it.",
  access: "owner",
  async run(command, scope) {
    if (command.mode === undefined) return { reply: shown(scope) };
    const current = scope.sessions.store.get(scope.context.sessionKey.key);
    if (command.mode === "inherit") {
      if (current?.queueMode) await patchSession(scope, { queueMode: undefined });
    } else await patchSession(scope, { queueMode: command.mode });
    return { reply: `${STRINGS.queueSet(command.mode)} ${shown(scope)}` };
  },
});
