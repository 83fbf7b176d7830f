import type { Logger } from "../../src/logger.js";
import { type MemoryStateData, openMemoryState } from "../../src/state/memory-state.js";
import type { StatePort } from "../../src/state/state-port.js";

// What the in-memory ports of this test process keep, by place: a port opened again on the same place
// (a restarted gateway, a reopened store) finds what was written there, as the local port finds its files.
const places = new Map<string, MemoryStateData>();

/**
 * The dependencies of a store (or the stores of a pool) on an in-memory state port kept under
 * `place` (any name; tests use their temporary folder): `createInbox(onMemoryState({ path, logger }, dir))`.
 * For unit tests of the code above the port; tests of what is on disk use `onLocalState`.
 */
export function onMemoryState<D extends { logger: Logger; readOnly?: boolean }>(
  deps: D,
  place: string,
): Omit<D, "readOnly"> & { state: StatePort } {
  const { readOnly, ...rest } = deps;
  return { ...rest, state: memoryStateAt(place, readOnly) };
}

/** An in-memory state port on what `place` holds. */
export function memoryStateAt(place: string, readOnly = false): StatePort {
  const data = places.get(place) ?? new Map();
  places.set(place, data);
  return openMemoryState({ data, readOnly });
}
