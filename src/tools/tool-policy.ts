import type { Config, ToolPolicy } from "../config/schema/index.js";

/** True when `pattern` names `tool`: the same name (any case), `*`, or `<server>__*` for every tool of a server. */
export function matchesTool(pattern: string, tool: string): boolean {
  const [p, t] = [pattern.trim().toLowerCase(), tool.toLowerCase()];
  if (p === "*") return true;
  return p.endsWith("*") ? t.startsWith(p.slice(0, -1)) : p === t;
}

/** True when a policy lets `tool` through: not denied, and allowed when there is an allow list. */
export function policyAllows(
  policy: Pick<ToolPolicy, "allow"> & { deny?: readonly string[] | undefined },
  tool: string,
): boolean {
  if (policy.deny?.some((p) => matchesTool(p, tool))) return false;
  return policy.allow === undefined || policy.allow.some((p) => matchesTool(p, tool));
}

/** True when agent `agentId` may use `tool`: `tools.allow`/`tools.deny`, then the agent's own `tools`. */
function agentAllows(config: Pick<Config, "tools" | "agents">, agentId: string, tool: string): boolean {
  const own = config.agents.list.find((agent) => agent.id === agentId)?.tools;
  return policyAllows(config.tools, tool) && (own === undefined || policyAllows(own, tool));
}

/** Who a tool set is for: an agent's session, or a sub-agent and the agent of the session that spawned it. */
export interface ToolAudience {
  agentId: string;
  subagent?: { parentAgentId?: string | undefined };
  /** false: someone other than an owner triggered the turn (undefined counts as an owner: agents_list, /context) */
  owner?: boolean;
}

/**
 * True when `tool` belongs in the audience's set. A guest's turn gets only the session tools and
 * `tools.guests.allow`. A sub-agent never gets session tools, gets `tools.subagents.tools`
 * (everything else by default), and never more than its parent's agent.
 */
export function toolPermitted(
  config: Pick<Config, "tools" | "agents">,
  audience: ToolAudience,
  tool: string,
  sessionTools: ReadonlySet<string>,
): boolean {
  // `append` changes files as `write` does: whatever keeps `write` from a turn keeps `append` too.
  if (tool.toLowerCase() === "append" && !toolPermitted(config, audience, "write", sessionTools)) return false;
  if (!agentAllows(config, audience.agentId, tool)) return false;
  // A guest's turn reaches the workspace and MCP servers only through tools.guests.allow; its session tools are scoped by visibility.
  if (audience.owner === false && !sessionTools.has(tool) && !policyAllows({ allow: config.tools.guests.allow }, tool))
    return false;
  if (!audience.subagent) return true;
  if (sessionTools.has(tool) || !policyAllows(config.tools.subagents.tools, tool)) return false;
  const parent = audience.subagent.parentAgentId;
  return parent === undefined || agentAllows(config, parent, tool);
}
