import type { Command } from "commander";
import { type AccountOverview, accountLabel, accountOverviews, sharedDmWarning } from "../inbound/account-overview.js";
import { resolveDefaultAgentId } from "../routing/resolve-route.js";
import { type CliIo, loadCliConfig, out } from "./cli-io.js";
import { printJson } from "./connect-cli.js";

const list = (entries: readonly string[]) => (entries.length ? entries.join(", ") : "nobody");

function accountLine(account: AccountOverview): string {
  const owners = `${list(account.owners)}${account.ownersFrom === "allowFrom" ? " (from allowFrom: no owners list)" : ""}`;
  const dms = account.dmPolicy === "disabled" ? "owners only (dmPolicy disabled)" : account.dmSenders.includes("*") ? "everyone" : list(account.dmSenders);
  return `  ${accountLabel(account)}: owners ${owners}; command users ${list(account.commandUsers)}; DMs from ${dms}`;
}

/** `switchboard doctor [--json]`: the config file, how DMs map to sessions, who owns each account, and warnings. */
export function registerDoctorCommand(program: Command, io: CliIo): void {
  program
    .command("doctor")
    .description("check the setup: config, DM sessions, owners per channel account, warnings (exit 0)")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const loaded = await loadCliConfig(io, cmd.optsWithGlobals().config);
      const { config } = loaded;
      const accounts = accountOverviews(config);
      const warning = sharedDmWarning(config);
      const mainSession = `agent:${resolveDefaultAgentId(config)}:${config.session.mainKey}`;
      if (opts.json) {
        printJson(io, {
          config: { path: loaded.path, exists: loaded.exists, valid: true },
          session: { dmScope: config.session.dmScope, mainKey: config.session.mainKey, scope: config.session.scope, mainSession },
          accounts,
          warnings: warning ? [warning] : [],
        });
        return;
      }
      out(io, `config: ${loaded.path} (${loaded.exists ? "valid" : "not found, every default applies"})`);
      out(io, config.session.dmScope === "main"
        ? `DM sessions: dmScope "main": every DM shares ${mainSession}`
        : `DM sessions: dmScope "${config.session.dmScope}": each sender has a DM session of their own`);
      out(io, accounts.length ? "channel accounts:" : "channel accounts: none configured (only the web and terminal chat, where you are the owner)");
      for (const account of accounts) out(io, accountLine(account));
      out(io, warning ? `\nwarning: ${warning}` : "no warnings");
    });
}
