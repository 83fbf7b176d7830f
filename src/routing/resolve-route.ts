import { type PeerRef, buildSessionKey } from "./build-session-key.js";
import { normalizeAccountId, normalizeChannel } from "./normalize.js";
import { type CompiledBinding, type RoutingConfig, type RoutingTable, routingTable } from "./routing-table.js";
import type { ParsedSessionKey } from "./session-key.js";

/** Which rule chose the agent (spec sessions.md §1.4). */
export type MatchedBy = "binding.peer" | "binding.guild" | "binding.team" | "binding.account" | "binding.channel" | "default";

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

/** The rank of the first rule a binding meets for `input` (0 peer ... 4 channel-wide), or -1. */
function ruleOf(compiled: CompiledBinding, input: RouteInput): number {
  const { match } = compiled.binding;
  if (match.peer && input.peer && match.peer.kind === input.peer.kind && match.peer.id === input.peer.id.trim()) return 0;
  if (match.guildId && match.guildId === input.guildId?.trim()) return 1;
  if (match.teamId && match.teamId === input.teamId?.trim()) return 2;
  if (compiled.accountWide) return compiled.account === "*" ? 4 : 3;
  return -1;
}

const MATCHED_BY: readonly MatchedBy[] = ["binding.peer", "binding.guild", "binding.team", "binding.account", "binding.channel"];

/** The binding that claims the message: lowest rule rank, ties by config order. */
function matchBinding(candidates: readonly CompiledBinding[] | undefined, accountId: string, input: RouteInput): { hit: CompiledBinding; rank: number } | undefined {
  let best: CompiledBinding | undefined;
  let bestRank = 5;
  for (const compiled of candidates ?? []) {
    if (compiled.account !== "*" && compiled.account !== accountId) continue;
    const rank = ruleOf(compiled, input);
    if (rank >= 0 && rank < bestRank) {
      best = compiled;
      bestRank = rank;
      if (rank === 0) break;
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
  const matched = matchBinding(table.byChannel.get(channel), accountId, input);
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
  return {
    agentId, channel, accountId, sessionKey: parsed.key, mainSessionKey: mainSessionKey(table, agentId, session.scope), parsed,
    matchedBy: matched ? MATCHED_BY[matched.rank]! : "default",
    ...(matched && { bindingIndex: matched.hit.index }),
  };
}

function mainSessionKey(table: RoutingTable, agentId: string, scope: RoutingConfig["session"]["scope"]): string {
  if (scope === "global") return "global";
  let key = table.mainSessionKeys.get(agentId);
  if (key === undefined) table.mainSessionKeys.set(agentId, (key = `agent:${agentId}:${table.mainKey}`));
  return key;
}
