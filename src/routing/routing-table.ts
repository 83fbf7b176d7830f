import type { Binding, Config } from "../config/index.js";
import { DEFAULT_AGENT_ID, normalizeAccountId, normalizeAgentId, normalizeMainKey } from "./normalize.js";

/** The parts of the config routing reads. */
export type RoutingConfig = Pick<Config, "session" | "agents" | "bindings">;

/** One binding, normalized once: its account (`*` for any) and the agent it names. */
export interface CompiledBinding {
  binding: Binding;
  index: number;
  /** normalized account id, or "*" */
  account: string;
  /** the agent messages go to: the bound id, or the default agent when it is not in `agents.list` */
  agentId: string;
  /** no peer, guild or team: matches the whole account (or channel, with `*`) */
  accountWide: boolean;
}

/** What routing needs from a config, computed once per config (it does not change after loading). */
export interface RoutingTable {
  defaultAgentId: string;
  mainKey: string;
  /** by channel, in config order: the bindings a rule other than the peer rule can pick (guild, team, account-wide) */
  byChannel: ReadonlyMap<string, readonly CompiledBinding[]>;
  /** bindings with a peer, by `<channel> <kind> <id>`, in config order: the first rule is one lookup */
  byPeer: ReadonlyMap<string, readonly CompiledBinding[]>;
  /** `agent:<id>:<mainKey>` (or `global`) per agent id */
  mainSessionKeys: Map<string, string>;
}

/** The agent ids a gateway knows, whose sessions it lists and resolves: `agents.list` in order, else `main`. */
export function configuredAgentIds(config: Pick<Config, "agents">): string[] {
  return config.agents.list.length ? config.agents.list.map((agent) => agent.id) : [DEFAULT_AGENT_ID];
}

/** The agent that gets messages no binding claims: the `default: true` entry, else the first, else `main`. */
export function resolveDefaultAgentId(config: Pick<Config, "agents">): string {
  const list = config.agents.list;
  return normalizeAgentId((list.find((agent) => agent.default) ?? list[0])?.id ?? DEFAULT_AGENT_ID);
}

/** The key of {@link RoutingTable.byPeer}. */
export function peerKey(channel: string, kind: string, id: string): string {
  return `${channel} ${kind} ${id}`;
}

function append<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function compile(config: RoutingConfig): RoutingTable {
  const defaultAgentId = resolveDefaultAgentId(config);
  const known = new Set(config.agents.list.map((agent) => agent.id));
  const byChannel = new Map<string, CompiledBinding[]>();
  const byPeer = new Map<string, CompiledBinding[]>();
  config.bindings.forEach((binding, index) => {
    const { match } = binding;
    const id = normalizeAgentId(binding.agentId);
    // A bound agent that is not in a non-empty `agents.list` falls back to the default agent.
    const agentId = known.size === 0 || known.has(id) ? id : defaultAgentId;
    const account = match.accountId === "*" ? "*" : normalizeAccountId(match.accountId);
    const compiled = { binding, index, account, agentId, accountWide: !match.peer && !match.guildId && !match.teamId };
    // A binding with only a peer can match by the peer rule alone, which is one lookup in byPeer.
    if (match.guildId || match.teamId || compiled.accountWide) append(byChannel, match.channel, compiled);
    if (match.peer) append(byPeer, peerKey(match.channel, match.peer.kind, match.peer.id), compiled);
  });
  return {
    defaultAgentId,
    mainKey: normalizeMainKey(config.session.mainKey),
    byChannel,
    byPeer,
    mainSessionKeys: new Map(),
  };
}

interface Cached {
  table: RoutingTable;
  session: RoutingConfig["session"];
  agents: RoutingConfig["agents"];
  bindings: RoutingConfig["bindings"];
}

const tables = new WeakMap<RoutingConfig, Cached>();

/** The routing table of `config`; rebuilt when its `session`, `agents` or `bindings` object is replaced. */
export function routingTable(config: RoutingConfig): RoutingTable {
  const cached = tables.get(config);
  if (
    cached &&
    cached.session === config.session &&
    cached.agents === config.agents &&
    cached.bindings === config.bindings
  )
    return cached.table;
  const table = compile(config);
  tables.set(config, { table, session: config.session, agents: config.agents, bindings: config.bindings });
  return table;
}
