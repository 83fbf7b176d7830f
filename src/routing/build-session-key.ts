import { resolveLinkedIdentity } from "./identity-links.js";
import { DEFAULT_MAIN_KEY, normalizeAccountId } from "./normalize.js";
import { buildKeyDirectly } from "./direct-key.js";
import { parseSessionKey } from "./parse-session-key.js";
import { type ParsedSessionKey, type SessionKeyParts, formatSessionKey } from "./session-key.js";
import type { SessionKeyInput } from "./session-key-input.js";

function dmParts(input: SessionKeyInput, peerId: string): SessionKeyParts {
  const { agentId, channel, threadId } = input;
  if (input.dmScope === "main" || !peerId.trim()) {
    return { kind: "main", agentId, mainKey: input.mainKey ?? DEFAULT_MAIN_KEY, ...(threadId && { threadId }) };
  }
  const id = resolveLinkedIdentity(input.identityLinks, channel, peerId) ?? peerId;
  const base = { kind: "dm" as const, agentId, peerId: id, ...(threadId && { threadId }) };
  if (input.dmScope === "per-peer") return base;
  if (input.dmScope === "per-channel-peer") return { ...base, channel };
  return { ...base, channel, accountId: normalizeAccountId(input.accountId) };
}

/**
 * The one builder of inbound session keys (docs/session-keys.md): applies the DM scope,
 * identity links, the main key, forum topics and thread suffixes. Writes the key once and types it
 * directly; ids holding `:` (or a channel or account that is not a plain word) take the slow path,
 * writing the key and reading it back, so both give exactly what `parseSessionKey` reads.
 */
export function buildSessionKey(input: SessionKeyInput): ParsedSessionKey {
  if (input.scope === "global") return { kind: "global", key: "global" };
  return buildKeyDirectly(input) ?? buildSessionKeyByParsing(input);
}

/** The reference builder: writes the key and reads it back (the slow path; property tests compare the two). */
export function buildSessionKeyByParsing(input: SessionKeyInput): ParsedSessionKey {
  if (input.scope === "global") return parseSessionKey("global", { scope: "global" })!;
  return parseSessionKey(formatSessionKey(keyParts(input)), { mainKey: input.mainKey, scope: input.scope })!;
}

/** The parts of the key of `input` (scope per-sender). */
function keyParts(input: SessionKeyInput): SessionKeyParts {
  const { peer } = input;
  if (!peer || peer.kind === "dm") return dmParts(input, peer ? peer.id.trim() || "unknown" : "");
  return {
    kind: peer.kind,
    agentId: input.agentId,
    channel: input.channel,
    peerId: peer.id,
    ...(peer.kind === "group" && input.topicId && { topicId: input.topicId }),
    ...(input.threadId && { threadId: input.threadId }),
  };
}
