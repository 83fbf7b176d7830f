import path from "node:path";
import type { Config, SwitchboardPaths } from "../config/index.js";
import { acquireGatewayLock } from "../gateway/gateway-lock.js";
import { createMemoryLogger } from "../logger.js";
import { type ChannelStates, openChannelStates } from "../state/channel-state.js";
import { type CliIo, CliExit, ExitCode, err } from "./cli-io.js";
import { exitOnStateError, withCliState } from "./cli-state.js";

/** The channels' state as a CLI command opened it, and where it is (for messages). */
interface OpenedChannelStates {
  states: ChannelStates;
  where: string;
}

/** Opens the backend writable under the gateway lock (no gateway runs on the home meanwhile), exiting with the one line on failure. */
async function openWritable(io: CliIo, config: Config, paths: SwitchboardPaths) {
  let lock: Awaited<ReturnType<typeof acquireGatewayLock>>;
  try {
    lock = await acquireGatewayLock(paths.home, { port: 0 });
  } catch (error) {
    err(io, `${(error as Error).message}. Stop it first: it keeps the channel state open.`);
    throw new CliExit(ExitCode.failure);
  }
  try {
    const dir = path.join(paths.home, "state");
    const { openStateBackend } = await import("../state/open-state-backend.js"); // pg loads only for the postgres backend
    const backend = await openStateBackend({ config: config.state, env: io.env, dir, logger: createMemoryLogger() });
    return { backend, lock };
  } catch (error) {
    await lock.release();
    exitOnStateError(io, error);
  }
}

/**
 * Runs `use` on the channels' state of the configured backend: read-only (a gateway may be running),
 * or, to write (linking a device), holding the gateway lock so no gateway has the state open.
 */
export async function withChannelStates<T>(
  io: CliIo,
  config: Config,
  paths: SwitchboardPaths,
  mode: "read" | "write",
  use: (opened: OpenedChannelStates) => Promise<T>,
): Promise<T> {
  const file = path.join(paths.home, "state", "channels.json");
  if (mode === "read")
    return withCliState(io, config, paths, async ({ state, where }) => {
      const states = await openChannelStates(state, { file });
      return use({ states, where }).finally(() => states.close());
    });
  const { backend, lock } = await openWritable(io, config, paths);
  try {
    const states = await openChannelStates(backend.state, { file });
    return await use({ states, where: backend.where }).finally(() => states.close());
  } finally {
    await backend.state.close();
    await lock.release();
  }
}
