import os from "node:os";
import path from "node:path";
import type { Config, SwitchboardPaths } from "../config/index.js";
import { createMemoryLogger } from "../logger.js";
import { CorruptFileError } from "../state/atomic-json-file.js";
import { openLocalState } from "../state/local-state.js";
import type { SessionStore } from "../sessions/session-store.js";
import { agentStoreLocations, corruptStoreFiles } from "../sessions/store-locations.js";

/** One agent's store as the read-only CLI sees it. */
export interface StoreView {
  agentId: string;
  storePath: string;
  /** undefined when the file failed to parse (see `problem`) */
  store?: SessionStore;
  problem?: string;
  corruptFiles: string[];
}

/** Opens every agent's store read-only: nothing is moved, migrated or written. */
export async function openStoresReadOnly(
  config: Config,
  paths: SwitchboardPaths,
  homeDir = os.homedir(),
): Promise<StoreView[]> {
  const locations = await agentStoreLocations(config, paths, homeDir);
  const { createSessionStore } = await import("../sessions/session-store.js"); // zod: see src/cli/main.ts
  // Read-only: a gateway may be running and writing these files.
  const state = openLocalState({ dir: path.join(paths.home, "state"), logger: createMemoryLogger(), readOnly: true });
  return Promise.all(
    locations.map(async ({ agentId, storePath }) => {
      const corruptFiles = await corruptStoreFiles(storePath);
      const keys = { defaultAgentId: agentId, mainKey: config.session.mainKey, scope: config.session.scope };
      try {
        const store = await createSessionStore({ state, path: storePath, keys, logger: createMemoryLogger() });
        return { agentId, storePath, store, corruptFiles };
      } catch (error) {
        if (!(error instanceof CorruptFileError)) throw error;
        return {
          agentId,
          storePath,
          corruptFiles,
          problem: `${error.message} (the gateway sets it aside when it starts)`,
        };
      }
    }),
  );
}

/** `3m`, `2h`, `5d` ago. */
export function formatAge(ms: number): string {
  const minutes = Math.max(0, Math.round(ms / 60_000));
  if (minutes < 60) return `${minutes}m`;
  if (minutes < 48 * 60) return `${Math.round(minutes / 60)}h`;
  return `${Math.round(minutes / 1440)}d`;
}
