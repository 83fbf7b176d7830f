import { DEFAULT_AGENT_ID, DEFAULT_MAIN_KEY, normalizeAgentId, normalizeMainKey } from "./normalize.js";
import {
  type ChatType,
  type ParsedSessionKey,
  type SessionKeyParts,
  formatSessionKey,
  isChannelSegment,
} from "./session-key.js";

/** How to read keys that depend on configuration. */
export interface KeyContext {
  /** default: "main"; the agent that bare legacy keys belong to */
  defaultAgentId?: string;
  /** default: "main"; `session.mainKey` */
  mainKey?: string;
  /** default: "per-sender"; under "global" every main session is the reserved `global` */
  scope?: "per-sender" | "global";
}

const INTERNAL = new Set(["cron", "hook", "subagent"]);

/** Index of the last `:<word>:` in `text` (case-insensitive) with something after it, or -1. */
function lastMarker(text: string, word: string): number {
  const at = text.toLowerCase().lastIndexOf(`:${word}:`);
  return at > 0 && at + word.length + 2 < text.length ? at : -1;
}

/** The segments from `n` on, joined again (ids may hold ":"). A plain function: a closure per call costs. */
function after(segments: readonly string[], n: number): string {
  return n === segments.length - 1 ? segments[n]! : segments.slice(n).join(":");
}

function parseBase(agentId: string, base: string, mainKey: string): SessionKeyParts {
  const segments = base.split(":");
  const first = segments[0]!.toLowerCase();
  const second = segments[1]?.toLowerCase();
  if (segments.length === 1 && (first === mainKey || first === DEFAULT_MAIN_KEY))
    return { kind: "main", agentId, mainKey };
  if (first === "dm" && after(segments, 1)) return { kind: "dm", agentId, peerId: after(segments, 1) };
  if (INTERNAL.has(first) && after(segments, 1))
    return { kind: first as "cron" | "hook" | "subagent", agentId, id: after(segments, 1) };
  if (first === "node" && after(segments, 1)) return { kind: "node", agentId, id: after(segments, 1) };
  if (first.startsWith("node-") && first.length > 5) return { kind: "node", agentId, id: base.slice(5) };
  if (!isChannelSegment(first)) return { kind: "other", agentId, rest: base };
  if (segments.length >= 3 && after(segments, 2)) {
    if (second === "dm") return { kind: "dm", agentId, channel: first, peerId: after(segments, 2) };
    if (second === "group" || second === "channel") {
      const peer = after(segments, 2);
      const topicAt = second === "group" ? lastMarker(peer, "topic") : -1;
      if (topicAt < 0) return { kind: second, agentId, channel: first, peerId: peer };
      return {
        kind: "group",
        agentId,
        channel: first,
        peerId: peer.slice(0, topicAt),
        topicId: peer.slice(topicAt + 7),
      };
    }
  }
  if (segments.length >= 4 && segments[2]!.toLowerCase() === "dm" && after(segments, 3)) {
    return { kind: "dm", agentId, channel: first, accountId: segments[1]!, peerId: after(segments, 3) };
  }
  return { kind: "other", agentId, rest: base };
}

/** Reads the part after `agent:<id>:`, splitting off a `:thread:<id>` suffix where the base takes one. */
function parseRest(agentId: string, rest: string, mainKey: string): SessionKeyParts {
  const threadAt = lastMarker(rest, "thread");
  if (threadAt > 0) {
    const base = parseBase(agentId, rest.slice(0, threadAt), mainKey);
    if (base.kind === "main" || base.kind === "dm" || base.kind === "group" || base.kind === "channel") {
      // `base` is a fresh object: adding to it is far cheaper than copying it (object spread is slow here).
      base.threadId = rest.slice(threadAt + 8);
      return base;
    }
  }
  return parseBase(agentId, rest, mainKey);
}

/** Rewrites the bare legacy shapes (docs/session-keys.md) into the `rest` of an agent key. */
function legacyRest(key: string): string {
  const lower = key.toLowerCase();
  if (lower.startsWith("group:")) {
    const id = key.slice(6);
    return id.toLowerCase().includes("@g.us") ? `whatsapp:group:${id}` : `unknown:group:${id}`;
  }
  if (lower.endsWith("@g.us")) {
    if (lower.startsWith("whatsapp:") && !/^whatsapp:(group|channel|dm):/.test(lower))
      return `whatsapp:group:${key.slice(9)}`;
    if (!lower.includes(":")) return `whatsapp:group:${key}`;
  }
  return key;
}

function chatTypeOf(parts: SessionKeyParts): ChatType | undefined {
  if (parts.kind === "main" || parts.kind === "dm") return "direct";
  if (parts.kind === "group" || parts.kind === "channel") return parts.kind;
  return undefined;
}

function channelOf(parts: SessionKeyParts): string | undefined {
  if ("channel" in parts && parts.channel) return parts.channel.toLowerCase();
  if (parts.kind === "other") {
    const [channel, second] = parts.rest.toLowerCase().split(":");
    if (second === "slash" && channel) return channel;
  }
  return undefined;
}

function finish(parts: SessionKeyParts, written?: string): ParsedSessionKey {
  const key = formatSessionKey(parts);
  // Normalise the parts exactly as the text was written, so parse(format(x)) is stable; a key that
  // was already written canonically reads back as the same parts.
  const canonical = key === parts.kind || key === written ? parts : reparse(key, parts);
  const chatType = chatTypeOf(canonical);
  const channel = channelOf(canonical);
  // `canonical` is always a fresh object made by this parse; it becomes the result.
  const parsed = canonical as ParsedSessionKey;
  parsed.key = key;
  if (chatType) parsed.chatType = chatType;
  if (channel) parsed.channel = channel;
  return parsed;
}

function reparse(key: string, parts: SessionKeyParts): SessionKeyParts {
  if (parts.kind === "global" || parts.kind === "unknown") return parts;
  const mainKey = parts.kind === "main" ? normalizeMainKey(parts.mainKey) : DEFAULT_MAIN_KEY;
  const [, agentId, ...rest] = key.split(":");
  return parseRest(agentId!, rest.join(":"), mainKey);
}

/**
 * Reads any session key (canonical, bare or legacy) into its typed, canonical form; null for an
 * empty or malformed one. Bare keys belong to `ctx.defaultAgentId`; `main` and the configured main
 * key are the main session (or `global` under scope global).
 */
export function parseSessionKey(raw: string | null | undefined, ctx: KeyContext = {}): ParsedSessionKey | null {
  const key = (raw ?? "").trim();
  if (!key) return null;
  const lower = key.toLowerCase();
  if (lower === "global" || lower === "unknown") return finish({ kind: lower });
  const mainKey = normalizeMainKey(ctx.mainKey);
  let agentId: string;
  let rest: string;
  if (lower.startsWith("agent:")) {
    const match = /^agent:+([^:]+):+(.+)$/i.exec(key);
    if (!match) return null;
    agentId = normalizeAgentId(match[1]);
    rest = match[2]!;
  } else {
    agentId = normalizeAgentId(ctx.defaultAgentId ?? DEFAULT_AGENT_ID);
    rest = legacyRest(key);
  }
  rest = rest.replace(/^[\s:]+/, "");
  if (!rest.trim()) return null;
  const parts = parseRest(agentId, rest, mainKey);
  if (parts.kind === "main" && ctx.scope === "global" && !parts.threadId) return finish({ kind: "global" });
  return finish(parts, key);
}

/** The canonical text of any key, or null when it cannot be read (see {@link parseSessionKey}). */
export function canonicalizeSessionKey(raw: string | null | undefined, ctx: KeyContext = {}): string | null {
  return parseSessionKey(raw, ctx)?.key ?? null;
}
