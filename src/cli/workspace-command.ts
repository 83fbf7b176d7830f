import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { closestMatch } from "../config/suggest.js";
import type { Config } from "../config/index.js";
import { isSwitchboardError } from "../errors.js";
import type { Workspace } from "../workspace/workspace-port.js";
import { type CliIo, CliExit, ExitCode, cliPaths, err, loadCliConfig, out, readStdin } from "./cli-io.js";

interface WorkspaceFlags {
  config?: string;
  json?: boolean;
  file?: string;
}

/** The agents a config has (the default one when it lists none). */
function agentIds(config: Config): string[] {
  return config.agents.list.length ? config.agents.list.map((agent) => agent.id) : ["main"];
}

/** Exits 2 when `agent` is not one of the config's agents, naming the nearest. */
function checkAgent(io: CliIo, config: Config, agent: string): void {
  const agents = agentIds(config);
  if (agents.includes(agent)) return;
  const hint = closestMatch(agent, agents);
  err(io, `unknown agent "${agent}"${hint ? ` (did you mean ${hint}?)` : ""}; agents: ${agents.join(", ")}`);
  throw new CliExit(ExitCode.badInput);
}

/**
 * Opens `agent`'s workspace where the config's `state.backend` keeps it, runs `use`, and closes
 * what it opened. No gateway is needed: the folder, or the database, is opened directly.
 */
async function withWorkspace<T>(
  io: CliIo,
  flags: WorkspaceFlags,
  agent: string,
  writes: boolean,
  use: (workspace: Workspace) => Promise<T>,
): Promise<T> {
  const { config } = await loadCliConfig(io, flags.config);
  checkAgent(io, config, agent);
  try {
    if (config.state.backend === "local") {
      const { workspaceDir } = await import("../agents/workspace/workspace-dir.js");
      const { createLocalWorkspace } = await import("../workspace/local-workspace.js");
      return await use(createLocalWorkspace(workspaceDir(config, cliPaths(io, flags.config).home, agent)));
    }
    const { openWorkspaceDatabase } = await import("./cli-database.js");
    const opened = await openWorkspaceDatabase(config, io.env, !writes);
    try {
      return await use(opened.workspaces(agent));
    } finally {
      await opened.close();
    }
  } catch (error) {
    if (!isSwitchboardError(error)) throw error;
    err(io, error.message);
    throw new CliExit(error.code === "INVALID_ARGUMENT" ? ExitCode.badInput : ExitCode.failure);
  }
}

async function list(io: CliIo, agent: string, folder: string | undefined, flags: WorkspaceFlags): Promise<void> {
  const entries = await withWorkspace(io, flags, agent, false, (ws) => ws.list(folder ?? "."));
  if (flags.json) return out(io, JSON.stringify(entries, null, 2));
  if (entries.length === 0) err(io, `no files in ${folder ?? "the workspace"} of agent ${agent}`);
  for (const entry of entries)
    out(io, entry.type === "folder" ? `${entry.name}/` : `${entry.name}\t${entry.bytes ?? 0} bytes`);
}

async function get(io: CliIo, agent: string, file: string, flags: WorkspaceFlags): Promise<void> {
  const text = await withWorkspace(io, flags, agent, false, (ws) => ws.read(file));
  if (text === undefined) {
    err(
      io,
      `agent ${agent} has no file "${file}" in its workspace; \`switchboard workspace ls ${agent}\` shows its files`,
    );
    throw new CliExit(ExitCode.failure);
  }
  io.stdout.write(text);
}

async function put(io: CliIo, agent: string, file: string, flags: WorkspaceFlags): Promise<void> {
  let text: string;
  try {
    text = flags.file !== undefined ? await readFile(flags.file, "utf8") : await readStdin(io);
  } catch (error) {
    err(io, `cannot read ${flags.file}: ${(error as Error).message}; pass a readable file, or the text on stdin`);
    throw new CliExit(ExitCode.badInput);
  }
  await withWorkspace(io, flags, agent, true, (ws) => ws.write(file, text));
  err(io, `wrote ${Buffer.byteLength(text)} bytes to ${file} in the workspace of agent ${agent}`);
}

/** `switchboard workspace ls|get|put <agent> <path>`: an agent's workspace on either backend, without a gateway. */
export function registerWorkspaceCommand(program: Command, io: CliIo): void {
  const workspace = program
    .command("workspace")
    .description("read and edit an agent's workspace files (AGENTS.md, USER.md, MEMORY.md, memory/*.md)");
  workspace
    .command("ls <agent> [folder]")
    .description("list a folder of the workspace (default: its top)")
    .option("--json", "print JSON")
    .option("--config <file>", "config file")
    .action((agent: string, folder: string | undefined, flags: WorkspaceFlags) => list(io, agent, folder, flags));
  workspace
    .command("get <agent> <path>")
    .description("print a workspace file")
    .option("--config <file>", "config file")
    .action((agent: string, file: string, flags: WorkspaceFlags) => get(io, agent, file, flags));
  workspace
    .command("put <agent> <path>")
    .description("create or replace a workspace file with stdin (or --file), whole")
    .option("--file <file>", "read the new content from this local file instead of stdin")
    .option("--config <file>", "config file")
    .action((agent: string, file: string, flags: WorkspaceFlags) => put(io, agent, file, flags));
}
