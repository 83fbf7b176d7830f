// Opens the local state port for the state contract, in the test and in its crash child.
import { createMemoryLogger } from "../../src/logger.js";
import { openLocalState } from "../../src/state/local-state.js";
import type { StatePort } from "../../src/state/state-port.js";

/** The local port: its tables are files at the paths the stores give, so `dir` needs no mapping. */
export async function openState(_dir: string): Promise<StatePort> {
  return openLocalState({ logger: createMemoryLogger() });
}
