import { z } from "zod";
import type { Config } from "../config/schema/index.js";
import type { ToolDeps } from "./tool-deps.js";
import { defineTool } from "./tool-definition.js";

/** The agent ids `requester` may spawn sub-agents under: itself, plus `subagents.allowAgents` (`["*"]` = any). */
export function spawnableAgents(config: Pick<Config, "agents">, requester: string, known: readonly string[]): string[] {
  const allow = config.agents.list.find((agent) => agent.id === requester)?.subagents?.allowAgents ?? [];
  const any = allow.some((id) => id.trim() === "*");
  const allowed = new Set(allow.map((id) => id.trim().toLowerCase()));
  // The requester first, then the others by id (docs/tools.md, agents_list).
  const others = known.filter((id) => id !== requester && (any || allowed.has(id))).sort();
  return [requester, ...others].filter((id) => known.includes(id));
}

/** `agents_list`: the agents this session may spawn sub-agents under. */
export const agentsListTool = defineTool({
  name: "agents_list",
  description: "List the agent ids you may use as agentId in sessions_spawn.",
  input: z.strictObject({}),
  async run(_input, caller, deps: ToolDeps) {
    const ids = spawnableAgents(deps.config, caller.agentId, deps.agentIds());
    const agents = ids.map((id) => {
      const entry = deps.config.agents.list.find((agent) => agent.id === id);
      return {
        id,
        name: entry?.name ?? id,
        model: entry?.model ?? deps.config.agents.defaults.model,
        self: id === caller.agentId,
        ...(deps.toolNamesFor && { tools: deps.toolNamesFor(id) }),
      };
    });
    return { requester: caller.agentId, agents };
  },
});
