import type { Config } from "../config/schema/index.js";
import type { SessionEntry } from "../sessions/session-entry.js";

/** The model a session runs: its `/new <model>` override, else the agent's, else the default. */
export function sessionModelRef(config: Config, agentId: string, entry: SessionEntry | undefined): string {
  if (entry?.providerOverride && entry.modelOverride) return `${entry.providerOverride}/${entry.modelOverride}`;
  return config.agents.list.find((agent) => agent.id === agentId)?.model ?? config.agents.defaults.model;
}
