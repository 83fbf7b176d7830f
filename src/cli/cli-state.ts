import path from "node:path";
import type { Config, SwitchboardPaths } from "../config/index.js";
import { isSwitchboardError } from "../errors.js";
import { createMemoryLogger } from "../logger.js";
import { openLocalState } from "../state/local-state.js";
import type { StatePort } from "../state/state-port.js";
import { type CliIo, CliExit, ExitCode, err } from "./cli-io.js";

/** The state a read-only CLI command reads, on the backend the config names. */
export interface CliState {
  /** read-only: nothing is migrated or written (a gateway may be running) */
  state: StatePort;
  /** "local" or "postgres": where store paths mean files, or names in the database */
  backend: Config["state"]["backend"];
  /** where the state lives: the `state/` folder, or the url (password masked) and schema */
  where: string;
  close(): Promise<void>;
}

/**
 * Opens the state read-only where `state.backend` says: the home's `state/` folder, or the
 * PostgreSQL schema (pg loads only then). A database that cannot be used prints its one line (url
 * masked, the fix) and exits 1; a postgres backend without a usable url exits 2.
 */
async function openCliState(io: CliIo, config: Config, paths: SwitchboardPaths): Promise<CliState> {
  if (config.state.backend === "local") {
    const dir = path.join(paths.home, "state");
    const state = openLocalState({ dir, logger: createMemoryLogger(), readOnly: true });
    return { state, backend: "local", where: dir, close: () => state.close() };
  }
  try {
    const { openStateDatabase } = await import("./cli-database.js");
    return { ...(await openStateDatabase(config, io.env)), backend: "postgres" };
  } catch (error) {
    exitOnStateError(io, error);
  }
}

/** A state that could not be opened: its one line, exit 2 for a config to fix, 1 otherwise; anything else is rethrown. */
export function exitOnStateError(io: CliIo, error: unknown): never {
  if (!isSwitchboardError(error)) throw error;
  err(io, error.message);
  throw new CliExit(error.code === "CONFIG_INVALID" ? ExitCode.badInput : ExitCode.failure);
}

/** Runs `use` on the read-only state and closes it after. */
export async function withCliState<T>(
  io: CliIo,
  config: Config,
  paths: SwitchboardPaths,
  use: (opened: CliState) => Promise<T>,
): Promise<T> {
  const opened = await openCliState(io, config, paths);
  try {
    return await use(opened);
  } finally {
    await opened.close();
  }
}
