import {
  DEFAULT_MAIN_KEY,
  normalizeAccountId,
  normalizeAgentId,
  normalizeChannel,
  normalizeMainKey,
} from "./normalize.js";

/** What a session is, read from its key. */
export type SessionKind =
  | "main"
  | "dm"
  | "group"
  | "channel"
  | "cron"
  | "hook"
  | "node"
  | "subagent"
  | "other"
  | "global"
  | "unknown";

/** The chat a session belongs to. */
export type ChatType = "direct" | "group" | "channel";

/** Kinds whose id is minted by Switchboard (lowercased in keys). */
type InternalKind = "cron" | "hook" | "node" | "subagent";

/** The parts of a session key; {@link formatSessionKey} writes them, `parseSessionKey` reads them back. */
export type SessionKeyParts =
  | { kind: "global" }
  | { kind: "unknown" }
  | { kind: "main"; agentId: string; mainKey: string; threadId?: string }
  | { kind: "dm"; agentId: string; channel?: string; accountId?: string; peerId: string; threadId?: string }
  | { kind: "group" | "channel"; agentId: string; channel: string; peerId: string; topicId?: string; threadId?: string }
  | { kind: InternalKind; agentId: string; id: string }
  | { kind: "other"; agentId: string; rest: string };

/** A parsed, canonical session key. */
export type ParsedSessionKey = SessionKeyParts & {
  /** the canonical text: structural parts lowercased, platform ids with their case */
  key: string;
  /** direct for main and DM sessions, group or channel for those; absent otherwise */
  chatType?: ChatType;
  /** the channel, where the key names one (DM per channel, groups, channels, `<channel>:slash:<id>`) */
  channel?: string;
};

/** Words that cannot be a channel name, because the parser reads them as another kind. */
const RESERVED_CHANNELS = new Set(["dm", "cron", "hook", "node", "subagent"]);

/** Platform ids keep their case; only surrounding space goes. Empty ids become `unknown`. */
function cleanId(raw: string): string {
  return raw.trim() || "unknown";
}

/** True when `name` can stand as the channel segment of a key (the parser would read it back as one). */
export function isChannelSegment(name: string): boolean {
  const channel = name.trim().toLowerCase();
  return channel !== "" && !channel.includes(":") && !RESERVED_CHANNELS.has(channel) && !channel.startsWith("node-");
}

function channelSegment(raw: string): string {
  const channel = normalizeChannel(raw);
  if (!isChannelSegment(channel)) {
    throw new Error(`"${raw}" cannot be a channel name in a session key`);
  }
  return channel;
}

function withThread(base: string, threadId: string | undefined): string {
  const thread = threadId?.trim();
  return thread ? `${base}:thread:${thread}` : base;
}

function formatRest(parts: Exclude<SessionKeyParts, { kind: "global" | "unknown" }>): string {
  switch (parts.kind) {
    case "main":
      return withThread(normalizeMainKey(parts.mainKey || DEFAULT_MAIN_KEY), parts.threadId);
    case "dm": {
      const peer = cleanId(parts.peerId);
      if (!parts.channel) return withThread(`dm:${peer}`, parts.threadId);
      const channel = channelSegment(parts.channel);
      const account = parts.accountId === undefined ? "" : `${normalizeAccountId(parts.accountId)}:`;
      return withThread(`${channel}:${account}dm:${peer}`, parts.threadId);
    }
    case "group":
    case "channel": {
      const topic = parts.kind === "group" && parts.topicId?.trim() ? `:topic:${parts.topicId.trim()}` : "";
      return withThread(
        `${channelSegment(parts.channel)}:${parts.kind}:${cleanId(parts.peerId)}${topic}`,
        parts.threadId,
      );
    }
    case "node":
      return `node-${parts.id.trim().toLowerCase()}`;
    case "cron":
    case "hook":
    case "subagent":
      return `${parts.kind}:${parts.id.trim().toLowerCase()}`;
    case "other":
      return parts.rest.trim().toLowerCase();
  }
}

/** Writes the canonical key text for `parts` (the one place key strings are assembled). */
export function formatSessionKey(parts: SessionKeyParts): string {
  if (parts.kind === "global" || parts.kind === "unknown") return parts.kind;
  return `agent:${normalizeAgentId(parts.agentId)}:${formatRest(parts)}`;
}
