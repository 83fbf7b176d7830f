import path from "node:path";
import type { Config } from "../../config/schema/index.js";

/** An agent's workspace: `agents.list[].workspace` (relative to the home), else `<home>/agents/<id>/workspace`. */
export function workspaceDir(config: Pick<Config, "agents">, home: string, agentId: string): string {
  const configured = config.agents.list.find((agent) => agent.id === agentId)?.workspace;
  return configured ? path.resolve(home, configured) : path.join(home, "agents", agentId, "workspace");
}
