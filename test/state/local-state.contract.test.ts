import path from "node:path";
import { runStateContract } from "../contracts/state-contract.js";
import { openState } from "./open-local-state.js";

runStateContract({
  name: "local files",
  open: openState,
  crashChild: { opener: path.resolve(import.meta.dirname, "open-local-state.ts") },
});
