import { runChannelStateContract } from "../contracts/channel-state-contract.js";
import { type MemoryStateData, openMemoryState } from "../../src/state/memory-state.js";
import { openState } from "./open-local-state.js";

runChannelStateContract({ name: "local files", open: openState });

// One store per folder, so a reopen of `dir` finds what was written there.
const stores = new Map<string, MemoryStateData>();
runChannelStateContract({
  name: "memory",
  async open(dir) {
    if (!stores.has(dir)) stores.set(dir, new Map());
    return openMemoryState({ data: stores.get(dir) });
  },
});
