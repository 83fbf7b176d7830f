import type { Logger } from "../../src/logger.js";
import { openLocalState } from "../../src/state/local-state.js";
import type { StatePort } from "../../src/state/state-port.js";

/**
 * The dependencies of one store opened on its own local state port, for tests that open a store
 * directly: `createSessionStore(onLocalState({ path, keys, logger }))`. `readOnly` makes the port
 * read-only, as the CLI's readers are.
 */
export function onLocalState<D extends { logger: Logger; now?: () => number; readOnly?: boolean }>(
  deps: D,
): Omit<D, "readOnly"> & { state: StatePort } {
  const { readOnly, ...rest } = deps;
  const state = openLocalState({
    logger: deps.logger,
    ...(deps.now && { now: deps.now }),
    ...(readOnly && { readOnly }),
  });
  return { ...rest, state };
}
