import { readdir } from "node:fs/promises";
import path from "node:path";
import type { Config } from "../config/schema/index.js";
import { type SwitchboardPaths, resolveStorePath } from "../config/paths.js";
import { DEFAULT_AGENT_ID } from "../routing/normalize.js";

/** One agent's store file. */
export interface AgentStoreLocation {
  agentId: string;
  storePath: string;
}

/**
 * The agents to look at (configured ones, else `main`, plus any found under `agents/` on disk)
 * and their store files; agents sharing one `session.store` file appear once, under the first.
 */
export async function agentStoreLocations(
  config: Pick<Config, "agents" | "session">,
  paths: SwitchboardPaths,
  homeDir: string,
): Promise<AgentStoreLocation[]> {
  const configured = config.agents.list.map((agent) => agent.id);
  const onDisk = await readdir(path.join(paths.home, "agents")).catch(() => [] as string[]);
  const ids = [...new Set([...(configured.length ? configured : [DEFAULT_AGENT_ID]), ...onDisk.sort()])];
  const seen = new Set<string>();
  const locations: AgentStoreLocation[] = [];
  for (const agentId of ids) {
    const storePath = resolveStorePath(paths.home, agentId, config.session.store, homeDir);
    if (seen.has(storePath)) continue;
    seen.add(storePath);
    locations.push({ agentId, storePath });
  }
  return locations;
}

/** Files a store set aside because they failed to parse (`sessions.json.corrupt-<time>`), newest last. */
export async function corruptStoreFiles(storePath: string): Promise<string[]> {
  const prefix = `${path.basename(storePath)}.corrupt-`;
  const names = await readdir(path.dirname(storePath)).catch(() => [] as string[]);
  return names
    .filter((name) => name.startsWith(prefix))
    .sort()
    .map((name) => path.join(path.dirname(storePath), name));
}
