import type { Command } from "commander";
import { type CliIo, cliPaths, loadCliConfig, out } from "./cli-io.js";
import { formatAge, openStoresReadOnly } from "./open-stores.js";

/** `switchboard status`: where state lives, session counts, recent sessions, corrupt files set aside. */
export function registerStatusCommand(program: Command, io: CliIo, now: () => number): void {
  program
    .command("status")
    .description("show where state lives, session counts, recent sessions and corrupt files set aside")
    .option("--json", "print a JSON object")
    .action(async (flags: { json?: boolean }, cmd: Command) => {
      const configFlag = cmd.optsWithGlobals().config;
      const loaded = await loadCliConfig(io, configFlag);
      const paths = cliPaths(io, configFlag);
      const views = await openStoresReadOnly(loaded.config, paths, io.homeDir);
      const at = now();
      const agents = views.map((view) => ({
        agentId: view.agentId,
        storePath: view.storePath,
        sessions: view.store?.size() ?? 0,
        recent: (view.store?.list({ limit: 5 }) ?? []).map(({ key, entry }) => ({ key, sessionId: entry.sessionId, ageMs: at - entry.updatedAt })),
        corruptFiles: view.corruptFiles,
        ...(view.problem && { problem: view.problem }),
      }));
      const status = { home: paths.home, config: { path: loaded.path, exists: loaded.exists }, agents };
      if (flags.json) return out(io, JSON.stringify(status, null, 2));
      out(io, `home    ${status.home}`);
      out(io, `config  ${loaded.path}${loaded.exists ? "" : " (not found: defaults)"}`);
      for (const agent of agents) {
        out(io, `\nagent ${agent.agentId}: ${agent.sessions} session${agent.sessions === 1 ? "" : "s"}  (${agent.storePath})`);
        if (agent.problem) out(io, `  PROBLEM ${agent.problem}`);
        for (const file of agent.corruptFiles) out(io, `  corrupt file set aside: ${file}`);
        for (const row of agent.recent) out(io, `  ${formatAge(row.ageMs).padStart(4)} ago  ${row.key}`);
      }
    });
}
