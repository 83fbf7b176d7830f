import { buildSessionKey } from "./build-session-key.js";
import type { PeerRef } from "./session-key-input.js";
import { normalizeAccountId, normalizeChannel } from "./normalize.js";
import { type CompiledBinding, type RoutingConfig, type RoutingTable, peerKey, routingTable } from "./routing-table.js";
import type { ParsedSessionKey } from "./session-key.js";

/** Which rule chose the agent (precedence: docs/session-keys.md). */
type MatchedBy = "binding.peer" | "binding.guild" | "binding.team" | "binding.account" | "binding.channel" | "default";

/** Where a message comes from, as routing needs it. */
export interface RouteInput {
  channel: string;
  accountId?: string | undefined;
  peer?: PeerRef | undefined;
  /** Discord guild */
  guildId?: string | undefined;
  /** Slack team */
  teamId?: string | undefined;
  topicId?: string | undefined;
  threadId?: string | undefined;
}

/** The agent and session a message lands in, and why. */
export interface ResolvedRoute {
  agentId: string;
  channel: string;
  accountId: string;
  sessionKey: string;
  mainSessionKey: string;
  matchedBy: MatchedBy;
  /** index into `bindings` of the binding that matched */
  bindingIndex?: number;
  parsed: ParsedSessionKey;
}

export { type RoutingConfig, resolveDefaultAgentId } from "./routing-table.js";

/** The trimmed ids of a message that bindings compare with. */
interface MatchIds {
  peerKind?: string | undefined;
  peerId?: string | undefined;
  guildId?: string | undefined;
  teamId?: string | undefined;
}

/** The rank of the first rule a binding meets (0 peer ... 4 channel-wide), or -1. */
function ruleOf(compiled: CompiledBinding, ids: MatchIds): number {
  const { match } = compiled.binding;
  if (match.peer && match.peer.kind === ids.peerKind && match.peer.id === ids.peerId) return 0;
  if (match.guildId && match.guildId === ids.guildId) return 1;
  if (match.teamId && match.teamId === ids.teamId) return 2;
  if (compiled.accountWide) return compiled.account === "*" ? 4 : 3;
  return -1;
}

const MATCHED_BY: readonly MatchedBy[] = [
  "binding.peer",
  "binding.guild",
  "binding.team",
  "binding.account",
  "binding.channel",
];

const NONE: readonly CompiledBinding[] = [];

const accountMatches = (compiled: CompiledBinding, accountId: string) =>
  compiled.account === "*" || compiled.account === accountId;

/** The binding that claims the message: lowest rule rank, ties by config order. */
function matchBinding(
  table: RoutingTable,
  channel: string,
  accountId: string,
  input: RouteInput,
): { hit: CompiledBinding; rank: number } | undefined {
  const candidates = table.byChannel.get(channel);
  if (!candidates && table.byPeer.size === 0) return undefined;
  const ids: MatchIds = {
    peerKind: input.peer?.kind,
    peerId: input.peer?.id.trim(),
    guildId: input.guildId?.trim(),
    teamId: input.teamId?.trim(),
  };
  if (ids.peerKind !== undefined && ids.peerId !== undefined) {
    const peerHit = table.byPeer
      .get(peerKey(channel, ids.peerKind, ids.peerId))
      ?.find((compiled) => accountMatches(compiled, accountId));
    if (peerHit) return { hit: peerHit, rank: 0 };
  }
  let best: CompiledBinding | undefined;
  let bestRank = 5;
  for (const compiled of candidates ?? NONE) {
    if (!accountMatches(compiled, accountId)) continue;
    const rank = ruleOf(compiled, ids);
    if (rank >= 0 && rank < bestRank) {
      best = compiled;
      bestRank = rank;
    }
  }
  return best && { hit: best, rank: bestRank };
}

/**
 * Resolves which agent handles a message and its session key. Bindings are tried by precedence
 * (peer, guild, team, account, channel-wide), ties by config order; else the default agent.
 */
export function resolveAgentRoute(config: RoutingConfig, input: RouteInput): ResolvedRoute {
  const table = routingTable(config);
  const channel = normalizeChannel(input.channel);
  const accountId = normalizeAccountId(input.accountId);
  const matched = matchBinding(table, channel, accountId, input);
  const agentId = matched ? matched.hit.agentId : table.defaultAgentId;
  const { session } = config;
  const parsed = buildSessionKey({
    agentId,
    channel,
    accountId,
    peer: input.peer,
    topicId: input.topicId,
    threadId: input.threadId,
    dmScope: session.dmScope,
    identityLinks: session.identityLinks,
    mainKey: table.mainKey,
    scope: session.scope,
  });
  const route: ResolvedRoute = {
    agentId,
    channel,
    accountId,
    sessionKey: parsed.key,
    mainSessionKey: mainSessionKey(table, agentId, session.scope),
    parsed,
    matchedBy: matched ? MATCHED_BY[matched.rank]! : "default",
  };
  // No object spread on this path: it costs more than the rest of routing.
  if (matched) route.bindingIndex = matched.hit.index;
  return route;
}

function mainSessionKey(table: RoutingTable, agentId: string, scope: RoutingConfig["session"]["scope"]): string {
  if (scope === "global") return "global";
  let key = table.mainSessionKeys.get(agentId);
  if (key === undefined) {
    key = `agent:${agentId}:${table.mainKey}`;
    table.mainSessionKeys.set(agentId, key);
  }
  return key;
}
