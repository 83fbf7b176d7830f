import path from "node:path";
import type { Config } from "../../config/schema/index.js";
import type { SwitchboardPaths } from "../../config/paths.js";
import type { Logger } from "../../logger.js";
import { openLocalState } from "../../state/local-state.js";
import { type OpenedAgentSessions, openAgentSessions } from "../agent-sessions.js";
import { agentStoreLocations } from "../store-locations.js";
import { type PrunedItem, pruneSessions } from "./prune-sessions.js";
import type { RetentionPlan } from "./retention-plan.js";

/**
 * One retention pass on a home no gateway runs on (the caller holds the gateway's lock): every
 * agent's store is opened as the gateway would open it, pruned, and written back in full.
 */
export async function pruneHome(input: {
  config: Config;
  paths: SwitchboardPaths;
  homeDir: string;
  plan: RetentionPlan;
  dryRun: boolean;
  logger: Logger;
  now: () => number;
}): Promise<PrunedItem[]> {
  const { config, logger, now } = input;
  const state = openLocalState({ dir: path.join(input.paths.home, "state"), logger, now });
  const opened: OpenedAgentSessions[] = [];
  try {
    for (const { agentId, storePath } of await agentStoreLocations(config, input.paths, input.homeDir))
      opened.push(await openAgentSessions({ agentId, state, storePath, session: config.session, logger, now }));
    return await pruneSessions(opened, input.plan, { now: now(), dryRun: input.dryRun });
  } finally {
    for (const agent of opened) await Promise.all([agent.store.close(), agent.transcripts.close()]);
    await state.close();
  }
}
