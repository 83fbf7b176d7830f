import path from "node:path";
import type { Logger } from "../../src/logger.js";
import { openLocalState } from "../../src/state/local-state.js";
import type { StatePort } from "../../src/state/state-port.js";

/**
 * The dependencies of one store opened on its own local state port, for tests that open a store
 * directly: `createSessionStore(onLocalState({ path, keys, logger }))`. `readOnly` makes the port
 * read-only, as the CLI's readers are. The port's journal lives next to the store's file, or in `journalDir`.
 */
export function onLocalState<D extends { path?: string; logger: Logger; now?: () => number; readOnly?: boolean }>(
  deps: D,
  journalDir = deps.path && path.dirname(deps.path),
): Omit<D, "readOnly"> & { state: StatePort } {
  if (!journalDir) throw new Error("onLocalState: give the journal's folder when the deps have no path");
  const { readOnly, ...rest } = deps;
  const state = openLocalState({
    dir: journalDir,
    logger: deps.logger,
    ...(deps.now && { now: deps.now }),
    ...(readOnly && { readOnly }),
  });
  return { ...rest, state };
}
