import type { CommandScope } from "../command-deps.js";
import { defineCommand } from "../command-definition.js";
import { STRINGS } from "../command-strings.js";

/** True while the session has a turn running or waiting, or a sub-agent running. */
function hasWork({ deps, context }: CommandScope): boolean {
  const key = context.sessionKey.key;
  return (
    deps.runs.active(key).length > 0 ||
    deps.lanes.queued(key) > 0 ||
    (deps.subagents?.list(key).some((s) => s.status === "running") ?? false)
  );
}

/**
 * `/stop` (and the bare abort words): aborts the running turn, clears the session's lane (the reply
 * says how many queued messages that dropped), stops its sub-agents and theirs, and marks the
 * entry `abortedLastRun`. Runs before the lane, so it works
 * during a run and in a denied session. A bare word with nothing to stop is ordinary text.
 */
export const stopCommand = defineCommand({
  name: "stop",
  usage: "/stop",
  summary:
    "Aborts the running turn, drops the messages waiting behind it and stops the session's sub-agents (also: a bare stop, abort, esc or interrupt).",
  access: "commands",
  async run(command, scope) {
    if (command.bare && !hasWork(scope)) return null;
    const { context, deps, sessions } = scope;
    const key = context.sessionKey.key;
    const { cleared } = deps.runtime.abortSession(key);
    const stopped = (await deps.subagents?.stop(key)) ?? 0;
    await sessions.store.patch(key, (current) => (current ? { abortedLastRun: true } : undefined));
    const parts = [
      STRINGS.aborted,
      cleared > 0 && STRINGS.droppedQueued(cleared),
      stopped > 0 && STRINGS.stoppedSubagents(stopped),
    ];
    return { reply: parts.filter(Boolean).join(" ") };
  },
});
