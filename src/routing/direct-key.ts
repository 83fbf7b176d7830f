import type { SessionKeyInput } from "./session-key-input.js";
import { resolveLinkedIdentity } from "./identity-links.js";
import {
  DEFAULT_MAIN_KEY,
  normalizeAccountId,
  normalizeAgentId,
  normalizeChannel,
  normalizeMainKey,
} from "./normalize.js";
import { type ParsedSessionKey, isChannelSegment } from "./session-key.js";

// Account words the parser would read as the kind of a `<channel>:<word>:...` key.
const KIND_WORDS: ReadonlySet<string> = new Set(["dm", "group", "channel"]);

/** A trimmed id part, "" when absent, or null when it holds ":" (then only the parser can say how it reads). */
function plain(raw: string | undefined, empty = ""): string | null {
  const id = raw === undefined ? empty : raw.trim() || empty;
  return id.includes(":") ? null : id;
}

type Mutable = { -readonly [K in keyof ParsedSessionKey]: ParsedSessionKey[K] } & Record<string, unknown>;

function withThread(parsed: Mutable, thread: string): ParsedSessionKey {
  if (thread) {
    parsed.threadId = thread;
    parsed.key = `${parsed.key}:thread:${thread}`;
  }
  return parsed as ParsedSessionKey;
}

function mainKeyOf(input: SessionKeyInput, agentId: string, thread: string): ParsedSessionKey | undefined {
  const mainKey = normalizeMainKey(input.mainKey ?? DEFAULT_MAIN_KEY);
  if (mainKey.includes(":")) return undefined;
  return withThread(
    { kind: "main", agentId, mainKey, key: `agent:${agentId}:${mainKey}`, chatType: "direct" } as Mutable,
    thread,
  );
}

function dmKey(input: SessionKeyInput, agentId: string, channel: string, thread: string): ParsedSessionKey | undefined {
  const raw = input.peer?.id.trim() || "unknown";
  const peerId = plain(resolveLinkedIdentity(input.identityLinks, input.channel, raw) ?? raw, "unknown");
  if (peerId === null) return undefined;
  if (input.dmScope === "per-peer") {
    return withThread(
      { kind: "dm", agentId, peerId, key: `agent:${agentId}:dm:${peerId}`, chatType: "direct" } as Mutable,
      thread,
    );
  }
  if (input.dmScope === "per-channel-peer") {
    return withThread(
      {
        kind: "dm",
        agentId,
        channel,
        peerId,
        key: `agent:${agentId}:${channel}:dm:${peerId}`,
        chatType: "direct",
      } as Mutable,
      thread,
    );
  }
  const accountId = normalizeAccountId(input.accountId);
  if (KIND_WORDS.has(accountId)) return undefined;
  const key = `agent:${agentId}:${channel}:${accountId}:dm:${peerId}`;
  return withThread({ kind: "dm", agentId, channel, accountId, peerId, key, chatType: "direct" } as Mutable, thread);
}

/**
 * The typed key of an inbound message whose ids hold no `:`, written once and never read back:
 * exactly what writing the key and parsing it gives (property tests hold the two together).
 * Undefined for anything else, which then takes that slow path.
 */
export function buildKeyDirectly(input: SessionKeyInput): ParsedSessionKey | undefined {
  const agentId = normalizeAgentId(input.agentId);
  const thread = plain(input.threadId);
  if (thread === null) return undefined;
  const { peer } = input;
  if (!peer || (peer.kind === "dm" && input.dmScope === "main")) return mainKeyOf(input, agentId, thread);
  const channel = normalizeChannel(input.channel);
  if (!isChannelSegment(channel)) return undefined;
  if (peer.kind === "dm") return dmKey(input, agentId, channel, thread);
  const peerId = plain(peer.id, "unknown");
  const topic = peer.kind === "group" ? plain(input.topicId) : "";
  if (peerId === null || topic === null) return undefined;
  const parsed = {
    kind: peer.kind,
    agentId,
    channel,
    peerId,
    key: `agent:${agentId}:${channel}:${peer.kind}:${peerId}`,
    chatType: peer.kind,
  } as Mutable;
  if (topic) {
    parsed.topicId = topic;
    parsed.key = `${parsed.key}:topic:${topic}`;
  }
  return withThread(parsed, thread);
}
