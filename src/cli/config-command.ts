import type { Command } from "commander";
import JSON5 from "json5";
import { type CliIo, CliExit, ExitCode, err, loadCliConfig, out } from "./cli-io.js";
import { configProblems } from "./config-problems.js";
import { databaseTarget } from "../config/schema/state.js";

/** `switchboard config validate|print`. */
export function registerConfigCommand(program: Command, io: CliIo): void {
  const config = program.command("config").description("check and show the configuration");

  config
    .command("validate")
    .description("check the config file; exit 2 listing every problem, warn (exit 0) about risky settings")
    .action(async (_opts, cmd: Command) => {
      const loaded = await loadCliConfig(io, cmd.optsWithGlobals().config);
      const database = loaded.config.state.backend === "postgres" ? databaseTarget(loaded.config.state, io.env) : {};
      const problems = [
        ...configProblems(loaded.config, io.env.SWITCHBOARD_GATEWAY_TOKEN),
        ...("problem" in database ? [database.problem] : []),
      ];
      if (problems.length > 0) {
        err(io, `${loaded.path} is invalid (${problems.length} problem${problems.length === 1 ? "" : "s"}):`);
        for (const line of problems) err(io, `  ${line}`);
        throw new CliExit(ExitCode.badInput);
      }
      out(io, loaded.exists ? `${loaded.path}: valid` : `${loaded.path}: not found, every default applies`);
      // Valid but risky: still exit 0.
      const { sharedDmWarning } = await import("../inbound/account-overview.js"); // loaded with the command, not at start (src/cli/main.ts)
      const warning = sharedDmWarning(loaded.config);
      if (warning) err(io, `warning: ${warning}`);
    });

  config
    .command("print")
    .description("print the resolved config with defaults (secrets masked)")
    .option("--json", "print JSON instead of JSON5")
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const loaded = await loadCliConfig(io, cmd.optsWithGlobals().config);
      const { maskSecrets } = await import("../config/mask-secrets.js"); // loaded with the command, not at start (src/cli/main.ts)
      const masked = maskSecrets(loaded.config);
      out(io, opts.json ? JSON.stringify(masked, null, 2) : JSON5.stringify(masked, null, 2));
    });
}
