import type { ParsedSessionKey } from "../../routing/session-key.js";
import type { SessionEntry } from "../../sessions/session-entry.js";

/** Longest title, in characters: a list row stays on one line. */
const MAX_TITLE = 60;

/** What {@link sessionTitle} reads. */
export interface SessionTitleInput {
  parsed: ParsedSessionKey;
  entry: SessionEntry | undefined;
  /** the task of the sub-agent running in this session, when it is one */
  task?: string | undefined;
  /** the gateway's own clients' channel: its sender name ("owner") names nobody */
  clientChannel: string;
  /** name the agent too (the gateway has more than one) */
  showAgent: boolean;
}

function clip(text: string): string {
  const line = text.trim().split("\n")[0]!.trim();
  return line.length > MAX_TITLE ? `${line.slice(0, MAX_TITLE - 1)}…` : line;
}

/** The part of a key that tells one session of its kind from another, shortened (uuids to 8 characters). */
function shortId(id: string): string {
  return /^[0-9a-f]{8}-[0-9a-f-]{27}$/i.test(id) ? id.slice(0, 8) : id;
}

function titleByKind(input: SessionTitleInput): string | undefined {
  const { parsed, entry } = input;
  switch (parsed.kind) {
    case "main":
      return input.showAgent ? `Main session of ${parsed.agentId}` : "Main session";
    case "subagent":
      return input.task ? `Sub-agent: ${clip(input.task)}` : `Sub-agent ${shortId(parsed.id)}`;
    case "cron":
      return `Cron job ${shortId(parsed.id)}`;
    case "hook":
    case "node":
      return `${parsed.kind === "hook" ? "Hook" : "Node"} ${shortId(parsed.id)}`;
    case "dm":
      // A gateway client's conversation: the sender is always "owner"; the key's id is all that differs.
      if (parsed.channel === input.clientChannel) return `Web chat ${shortId(parsed.peerId)}`;
      return entry?.displayName;
    default:
      return entry?.displayName || entry?.subject;
  }
}

/**
 * The name a person knows a session by, one line long: its label, else a sub-agent's task, the
 * main session as such, a chat's display name or subject; the key only when nothing else is known.
 */
export function sessionTitle(input: SessionTitleInput): string {
  const label = input.entry?.label?.trim();
  if (label) return clip(label);
  const byKind = titleByKind(input)?.trim();
  return byKind ? clip(byKind) : input.parsed.key;
}
