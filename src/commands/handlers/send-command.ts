import { randomUUID } from "node:crypto";
import { resolveSendPolicy } from "../../delivery/send-policy.js";
import type { SessionEntry } from "../../sessions/session-entry.js";
import type { CommandScope } from "../command-deps.js";
import { defineCommand } from "../command-definition.js";
import { STRINGS } from "../command-strings.js";

const SHOWN = { allow: "on", deny: "off", inherit: "inherit" } as const;

/** The sendPolicy verdict for the command's session, as `/send` and `/status` show it. */
export function sendVerdict(
  { context, deps }: Pick<CommandScope, "context" | "deps">,
  entry: SessionEntry | undefined,
) {
  // The gateway's own clients are not a chat sendPolicy's channel rules name.
  const channel = context.sender.gatewayClient ? undefined : context.message.channel;
  return resolveSendPolicy({ policy: deps.config.session.sendPolicy, entry, key: context.sessionKey, channel });
}

/** `/send on|off|inherit`: sets or clears the session's sendPolicy override (it outlives resets; docs/commands.md). */
export const sendCommand = defineCommand({
  name: "send",
  usage: "/send on|off|inherit",
  summary:
    "Turns delivery of this session's messages to its chats on or off (inherit: back to session.sendPolicy); the session still runs and keeps its transcript.",
  access: "owner",
  async run(command, { context, deps, sessions, now }) {
    const at = now();
    // The override is all that changes: updatedAt stays (a setting is not activity); a missing entry is created.
    const entry = await sessions.store.patch(context.sessionKey.key, (current) => {
      if (command.mode === "inherit") return current?.sendPolicy ? { sendPolicy: undefined } : undefined;
      return { ...(!current && { sessionId: randomUUID(), createdAt: at, updatedAt: at }), sendPolicy: command.mode };
    });
    const verdict = sendVerdict({ context, deps }, entry);
    return { reply: `${STRINGS.sendSet(SHOWN[command.mode])} ${STRINGS.sendEffective(verdict)}` };
  },
});
