import path from "node:path";
import { runStateContract } from "../contracts/state-contract.js";
import { usePostgres } from "../support/postgres.js";
import { openState } from "./postgres/open-postgres-state.js";

// A real PostgreSQL server (skipped with the reason where none is installed; CI must run it).
usePostgres();

runStateContract({
  name: "PostgreSQL",
  open: openState,
  crashChild: { opener: path.resolve(import.meta.dirname, "postgres/open-postgres-state.ts") },
});
