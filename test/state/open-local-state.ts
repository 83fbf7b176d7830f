// Opens the local state port for the state contract, in the test and in its crash child.
import path from "node:path";
import { createMemoryLogger } from "../../src/logger.js";
import { openLocalState } from "../../src/state/local-state.js";
import type { StatePort } from "../../src/state/state-port.js";

/** The local port as the gateway opens it for a home `dir`: its journal in `<dir>/state`, its tables where the stores say. */
export async function openState(dir: string): Promise<StatePort> {
  return openLocalState({ dir: path.join(dir, "state"), logger: createMemoryLogger() });
}
