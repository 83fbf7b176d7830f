import { runStateContract } from "../contracts/state-contract.js";
import { openMemoryState, type MemoryStateData } from "../../src/state/memory-state.js";

// One store per folder the suite makes, so a reopen of `dir` finds what was written there.
const stores = new Map<string, MemoryStateData>();

runStateContract({
  name: "memory",
  async open(dir) {
    if (!stores.has(dir)) stores.set(dir, new Map());
    return openMemoryState({ data: stores.get(dir) });
  },
});
