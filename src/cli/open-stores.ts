import os from "node:os";
import type { Config, SwitchboardPaths } from "../config/index.js";
import { createMemoryLogger } from "../logger.js";
import { CorruptFileError } from "../state/atomic-json-file.js";
import type { SessionStore } from "../sessions/session-store.js";
import { agentStoreLocations, corruptStoreFiles } from "../sessions/store-locations.js";
import type { CliState } from "./cli-state.js";

/** One agent's store as the read-only CLI sees it. */
export interface StoreView {
  agentId: string;
  /** the store file (local backend), or where the database is ("postgres") */
  storePath: string;
  /** undefined when the file failed to parse (see `problem`) */
  store?: SessionStore;
  problem?: string;
  corruptFiles: string[];
}

/** Opens every agent's store read-only on the backend `opened` reads: nothing is moved, migrated or written. */
export async function openStoresReadOnly(
  config: Config,
  paths: SwitchboardPaths,
  opened: CliState,
  homeDir = os.homedir(),
): Promise<StoreView[]> {
  const locations = await agentStoreLocations(config, paths, homeDir);
  const { createSessionStore } = await import("../sessions/session-store.js"); // zod: see src/cli/main.ts
  const { state } = opened;
  const local = opened.backend === "local";
  return Promise.all(
    locations.map(async ({ agentId, storePath: file }) => {
      // Only files are set aside when corrupt; the database keeps no such copies.
      const corruptFiles = local ? await corruptStoreFiles(file) : [];
      const storePath = local ? file : opened.where;
      const keys = { defaultAgentId: agentId, mainKey: config.session.mainKey, scope: config.session.scope };
      try {
        const store = await createSessionStore({ state, path: file, keys, logger: createMemoryLogger() });
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
