import type { Binding, Config } from "../config/index.js";
import { type PeerRef, buildSessionKey } from "./build-session-key.js";
import { DEFAULT_AGENT_ID, normalizeAccountId, normalizeAgentId, normalizeChannel } from "./normalize.js";
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

/** The parts of the config routing reads. */
export type RoutingConfig = Pick<Config, "session" | "agents" | "bindings">;

/** The agent that gets messages no binding claims: the `default: true` entry, else the first, else `main`. */
export function resolveDefaultAgentId(config: Pick<Config, "agents">): string {
  const list = config.agents.list;
  return normalizeAgentId((list.find((agent) => agent.default) ?? list[0])?.id ?? DEFAULT_AGENT_ID);
}

function accountMatches(binding: Binding, accountId: string): boolean {
  const wanted = binding.match.accountId;
  if (wanted === "*") return true;
  return normalizeAccountId(wanted) === accountId;
}

function isAccountWide(binding: Binding): boolean {
  return !binding.match.peer && !binding.match.guildId && !binding.match.teamId;
}

const RULES: ReadonlyArray<[MatchedBy, (b: Binding, input: RouteInput) => boolean]> = [
  ["binding.peer", (b, i) => !!b.match.peer && !!i.peer && b.match.peer.kind === i.peer.kind && b.match.peer.id === i.peer.id.trim()],
  ["binding.guild", (b, i) => !!b.match.guildId && b.match.guildId === i.guildId?.trim()],
  ["binding.team", (b, i) => !!b.match.teamId && b.match.teamId === i.teamId?.trim()],
  ["binding.account", (b) => isAccountWide(b) && b.match.accountId !== "*"],
  ["binding.channel", (b) => isAccountWide(b) && b.match.accountId === "*"],
];

/**
 * Resolves which agent handles a message and its session key. Bindings are tried by precedence
 * (peer, guild, team, account, channel-wide), ties by config order; else the default agent.
 */
export function resolveAgentRoute(config: RoutingConfig, input: RouteInput): ResolvedRoute {
  const channel = normalizeChannel(input.channel);
  const accountId = normalizeAccountId(input.accountId);
  const candidates = config.bindings
    .map((binding, index) => ({ binding, index }))
    .filter(({ binding }) => binding.match.channel === channel && accountMatches(binding, accountId));
  let matchedBy: MatchedBy = "default";
  let hit: { binding: Binding; index: number } | undefined;
  for (const [name, test] of RULES) {
    hit = candidates.find(({ binding }) => test(binding, input));
    if (hit) {
      matchedBy = name;
      break;
    }
  }
  const agentId = pickAgent(config, hit?.binding.agentId);
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
    mainKey: session.mainKey,
    scope: session.scope,
  });
  const mainSessionKey = buildSessionKey({ agentId, channel, dmScope: "main", mainKey: session.mainKey, scope: session.scope }).key;
  return {
    agentId, channel, accountId, sessionKey: parsed.key, mainSessionKey, matchedBy, parsed,
    ...(hit && { bindingIndex: hit.index }),
  };
}

/** A bound agent that is not in a non-empty `agents.list` falls back to the default agent. */
function pickAgent(config: RoutingConfig, bound: string | undefined): string {
  if (!bound) return resolveDefaultAgentId(config);
  const id = normalizeAgentId(bound);
  const list = config.agents.list;
  return list.length === 0 || list.some((agent) => agent.id === id) ? id : resolveDefaultAgentId(config);
}
