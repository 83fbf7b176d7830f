// The routing config every gateway of one PostgreSQL schema must share (docs/scale-out.md "One
// routing config per schema"): the settings a chat's session key, and so its partition
// (`partOf(key)`), is computed from. Two gateways that differ in any of them would file one chat
// under two sessions, so the first gateway stores them in the schema and a gateway that differs is
// refused when it joins. Normalized as routing reads them, so spellings that route alike compare equal.
// The agent ids are among them because a standby answers sessions.list / sessions.resolve (and their
// titles) over its own list: a standby with another list would answer differently from the owner.
import { configuredAgentIds, routingTable } from "./routing-table.js";
import type { RoutingConfig } from "./routing-table.js";

/** One binding as routing applies it: its match, normalized, and the agent it resolves to. */
interface RoutingBinding {
  channel: string;
  account: string;
  agentId: string;
  peer?: { kind: string; id: string };
  guildId?: string;
  teamId?: string;
}

/** The routing-relevant settings of a config, by config path; plain JSON, stored as such in `cluster_settings`. */
export interface RoutingSettings {
  "session.scope": string;
  "session.dmScope": string;
  "session.mainKey": string;
  "session.identityLinks": Array<[string, string[]]>;
  /** the agent of messages no binding claims (`agents.list`: the `default: true` entry, else the first) */
  "agents.default": string;
  /** the agent ids whose sessions are listed and resolved, in `agents.list` order (`["main"]` for an empty list) */
  "agents.list": string[];
  bindings: RoutingBinding[];
}

/** The settings of {@link RoutingSettings}, in the order a refusal names them. */
export const ROUTING_SETTING_NAMES: ReadonlyArray<keyof RoutingSettings> = [
  "session.scope",
  "session.dmScope",
  "session.mainKey",
  "session.identityLinks",
  "agents.default",
  "agents.list",
  "bindings",
];

/** The routing settings of `config`: identity links in config order (the first that lists an id wins), bindings likewise. */
export function routingSettings(config: RoutingConfig): RoutingSettings {
  const table = routingTable(config);
  const compiled = [...table.byChannel.values(), ...table.byPeer.values()].flat();
  const byIndex = [...new Map(compiled.map((c) => [c.index, c])).values()].sort((a, b) => a.index - b.index);
  return {
    "session.scope": config.session.scope,
    "session.dmScope": config.session.dmScope,
    "session.mainKey": table.mainKey,
    "session.identityLinks": Object.entries(config.session.identityLinks).map(([name, ids]) => [
      name.trim().toLowerCase(),
      ids.map((id) => id.trim()),
    ]),
    "agents.default": table.defaultAgentId,
    "agents.list": configuredAgentIds(config),
    bindings: byIndex.map(({ binding: { match }, account, agentId }) => ({
      channel: match.channel,
      account,
      agentId,
      ...(match.peer && { peer: { kind: match.peer.kind, id: match.peer.id } }),
      ...(match.guildId && { guildId: match.guildId }),
      ...(match.teamId && { teamId: match.teamId }),
    })),
  };
}

/** The settings that differ between `mine` and `theirs` (a stored value of any shape), by name, in {@link ROUTING_SETTING_NAMES} order. */
export function routingDifferences(mine: RoutingSettings, theirs: unknown): Array<keyof RoutingSettings> {
  const other = (typeof theirs === "object" && theirs !== null ? theirs : {}) as Record<string, unknown>;
  return ROUTING_SETTING_NAMES.filter((name) => JSON.stringify(mine[name]) !== JSON.stringify(other[name]));
}

/** One differing setting in words: `session.dmScope is "per-peer" here, "main" there`. */
export function describeDifference(
  name: keyof RoutingSettings,
  mine: RoutingSettings,
  theirs: unknown,
  where = "there",
): string {
  const other = (typeof theirs === "object" && theirs !== null ? theirs : {}) as Record<string, unknown>;
  const show = (value: unknown) => {
    const text = JSON.stringify(value) ?? "unset";
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  };
  return `${name} is ${show(mine[name])} here, ${show(other[name])} ${where}`;
}
