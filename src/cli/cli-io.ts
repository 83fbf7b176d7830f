import os from "node:os";
import { isSwitchboardError } from "../errors.js";
import type { Config, LoadedConfig, SwitchboardPaths } from "../config/index.js";
import { resolvePaths } from "../config/paths.js";
import type { ChannelAdapter, ChannelDefinition } from "../delivery/channel-adapter.js";
import { type Logger, createLogger, prettyDestination } from "../logger.js";

/** Creates the channel adapters a config turns on; the process entry passes it in (loading them lazily), so src/ never imports adapters/. */
type ChannelAdapterFactory = (
  config: Config,
  deps: { home: string; homeDir: string; env: Readonly<Record<string, string | undefined>>; logger: Logger },
) => ChannelAdapter[] | Promise<ChannelAdapter[]>;

/** The process edges the CLI touches; tests pass their own. */
export interface CliIo {
  env: Readonly<Record<string, string | undefined>>;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown; isTTY?: boolean };
  cwd: string;
  homeDir?: string;
  /**
   * The channel table (bin/entry.ts loads adapters/index.ts): every config is checked against it
   * and `channels login` finds a channel's `login` there. Without it (tests of other commands),
   * `channels.<id>` is checked for the shared fields only and no channel can log in.
   */
  channels?: () => Promise<readonly ChannelDefinition[]>;
  /** none: only the web chat; bin/entry.ts passes `createConfiguredAdapters` from adapters/index.ts */
  channelAdapters?: ChannelAdapterFactory;
}

/** Exit codes: 0 ok, 1 failure at run time, 2 bad input (config, flags). */
export const ExitCode = { ok: 0, failure: 1, badInput: 2 } as const;

/** Thrown by a command to end the CLI with `code` after it printed what went wrong. */
export class CliExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** Prints a line to stdout. */
export function out(io: CliIo, line: string): void {
  io.stdout.write(`${line}\n`);
}

/** Prints a line to stderr. */
export function err(io: CliIo, line: string): void {
  io.stderr.write(`${line}\n`);
}

/** The state directory and config file for this invocation. */
export function cliPaths(io: CliIo, configFlag: string | undefined): SwitchboardPaths {
  return resolvePaths({ homeDir: io.homeDir ?? os.homedir(), cwd: io.cwd, env: io.env, configFlag });
}

/** Loads the config or prints every problem and exits 2. Warnings go to stderr. */
export async function loadCliConfig(io: CliIo, configFlag: string | undefined): Promise<LoadedConfig> {
  const paths = cliPaths(io, configFlag);
  // Loaded here, not at the top: the schema (zod) is the largest part of a start (src/cli/main.ts).
  const { loadConfig } = await import("../config/load-config.js");
  try {
    // The channel table too is loaded only when the file has a `channels` section.
    const loaded = await loadConfig(paths.configFile, async () => io.channels?.());
    if (!loaded.exists && paths.explicit) {
      err(
        io,
        `${paths.configFile} does not exist (named by ${configFlag?.trim() ? "--config" : "SWITCHBOARD_CONFIG"}); create it or drop the setting to use the defaults`,
      );
      throw new CliExit(ExitCode.badInput);
    }
    for (const warning of loaded.warnings) err(io, `warning: ${warning}`);
    return loaded;
  } catch (error) {
    if (!isSwitchboardError(error)) throw error;
    err(io, error.message);
    for (const line of error.details) err(io, `  ${line}`);
    throw new CliExit(ExitCode.badInput);
  }
}

/** The logger of a command that runs services: lines for a person on a terminal, JSON lines when not. */
export function createCliLogger(io: CliIo, level: string): Logger {
  // NO_COLOR (https://no-color.org): readable lines still, without colour codes.
  return createLogger(level, io.stderr.isTTY ? prettyDestination(io.stderr, !io.env.NO_COLOR) : undefined);
}

/** Reads all of stdin as text. */
export async function readStdin(io: CliIo): Promise<string> {
  let text = "";
  for await (const chunk of io.stdin) text += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
  return text;
}

/** Parses a JSON flag value, or prints `--<flag> is not JSON: ...` and exits 2. */
export function parseJsonFlag(io: CliIo, flag: string, value: string): unknown {
  try {
    return JSON.parse(value);
  } catch (error) {
    err(io, `--${flag} is not JSON: ${(error as Error).message}`);
    throw new CliExit(ExitCode.badInput);
  }
}

/** Hooks the process edge gives the CLI: how a long-running command learns it should stop. */
export interface CliSignals {
  onStop: (stop: () => void) => void;
  /** registers the handler for a promise rejection nobody handled (the gateway logs it and keeps serving) */
  onUnexpected?: (handler: (err: unknown) => void) => void;
}
