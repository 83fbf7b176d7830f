import { runChannelStateContract } from "../contracts/channel-state-contract.js";
import { usePostgres } from "../support/postgres.js";
import { openState } from "./postgres/open-postgres-state.js";

// A real PostgreSQL server (skipped with the reason where none is installed; CI must run it).
usePostgres();

runChannelStateContract({ name: "PostgreSQL", open: openState });
