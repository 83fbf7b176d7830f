import type { Logger } from "../logger.js";
import type { InboundMessage } from "../routing/inbound-message.js";
import type { ParsedSessionKey } from "../routing/session-key.js";
import { type AgentSessionsPool, transcriptRef } from "../sessions/agent-sessions.js";

/**
 * A chat command or its reply as a `chat` event of the session: `state: "command"` with the
 * command the person typed, then `state: "final"` with the reply (as a turn's reply arrives).
 */
export interface CommandChatEvent {
  sessionKey: string;
  /** the command's id: the client's idempotency key, else the run id the inbox gave the message */
  runId: string;
  state: "command" | "final";
  role: "user" | "assistant";
  text: string;
  command: true;
}

/** Dependencies of {@link createCommandEcho}. */
export interface CommandEchoDeps {
  sessions: AgentSessionsPool;
  /** pushes an event to the session's clients (the gateway's event hub) */
  emit?: (event: "chat", payload: CommandChatEvent) => void;
  logger: Logger;
}

/** One command that ran, and its reply. */
export interface RanCommand {
  parsed: ParsedSessionKey;
  agentId: string;
  message: InboundMessage;
  reply?: string;
  id: string;
}

/**
 * Shows a command that ran, and its reply, to every client of the session and keeps both in the
 * session's transcript (marked `command`, so no model's context includes them). A session that
 * has no entry yet has no transcript: its clients still get the events.
 */
export function createCommandEcho(deps: CommandEchoDeps) {
  const { logger } = deps;

  async function keep(ran: RanCommand): Promise<void> {
    const { store, transcripts } = await deps.sessions.forAgent(ran.agentId);
    const entry = store.get(ran.parsed.key);
    if (!entry) return;
    const file = transcriptRef(entry);
    const options = { sessionId: entry.sessionId, sessionKey: ran.parsed.key };
    const provenance = { kind: "channel" as const, channel: ran.message.channel };
    await transcripts.append(
      file,
      { role: "user", content: ran.message.text, runId: ran.id, command: true, provenance },
      options,
    );
    if (ran.reply)
      await transcripts.append(file, { role: "assistant", content: ran.reply, runId: ran.id, command: true }, options);
  }

  return {
    /** True when the session's transcript already holds this command (a replay after a crash must not run it again). */
    async recorded(agentId: string, parsed: ParsedSessionKey, id: string): Promise<boolean> {
      const { store, transcripts } = await deps.sessions.forAgent(agentId);
      const entry = store.get(parsed.key);
      if (!entry) return false;
      const { messages } = await transcripts.readTail(transcriptRef(entry), { limit: 50, includeTools: false });
      return messages.some((m) => m.runId === id && (m as { command?: boolean }).command === true);
    },

    async record(ran: RanCommand): Promise<void> {
      // History is for people: a command whose lines could not be written has still run and answered.
      await keep(ran).catch((err: unknown) =>
        logger.warn({ sessionKey: ran.parsed.key, err }, "command not kept in the transcript"),
      );
      const base = { sessionKey: ran.parsed.key, runId: ran.id, command: true as const };
      deps.emit?.("chat", { ...base, state: "command", role: "user", text: ran.message.text });
      if (ran.reply) deps.emit?.("chat", { ...base, state: "final", role: "assistant", text: ran.reply });
    },
  };
}
