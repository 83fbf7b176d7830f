import type { Command } from "commander";
import { createLogger } from "../logger.js";
import {
  type ChannelAccountState,
  type CliIo,
  CliExit,
  ExitCode,
  cliPaths,
  err,
  loadCliConfig,
  out,
} from "./cli-io.js";
import { printJson } from "./connect-cli.js";

function loginFor(io: CliIo, channel: string) {
  const login = io.channelLogins?.[channel.toLowerCase()];
  if (login) return login;
  const known = Object.keys(io.channelLogins ?? {});
  err(
    io,
    `"${channel}" has nothing to link${known.length ? ` (channels that link as a device: ${known.join(", ")})` : ""}. Token-based channels such as telegram are configured in the config file.`,
  );
  throw new CliExit(ExitCode.badInput);
}

function ago(ms: number, now: number): string {
  const minutes = Math.round((now - ms) / 60_000);
  if (minutes < 1) return "just now";
  if (minutes < 120) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h ago` : `${Math.round(hours / 24)} days ago`;
}

function describe(state: ChannelAccountState, now: number): string {
  const parts = [
    state.linked ? `linked${state.identity ? ` as ${state.identity}` : ""}` : "not linked",
    state.updatedAt === undefined
      ? "not run by a gateway yet"
      : `${state.connected ? "connected" : "not connected"} (as of ${ago(state.updatedAt, now)})`,
    ...(state.credentialsSavedAt !== undefined ? [`credentials saved ${ago(state.credentialsSavedAt, now)}`] : []),
  ];
  return `${parts.join(", ")}${state.lastError ? `\n    last error: ${state.lastError}` : ""}`;
}

/** `switchboard channels login|logout|status`: link a device-based channel (WhatsApp) and see every account. */
export function registerChannelsCommand(program: Command, io: CliIo, now: () => number): void {
  const channels = program
    .command("channels")
    .description("link channels that work as a linked device, and show their state");

  const run =
    (action: "login" | "logout") =>
    async (channel: string, flags: { account?: string; pairCode?: string }, cmd: Command) => {
      const configFlag = cmd.optsWithGlobals().config;
      const login = loginFor(io, channel);
      const { config } = await loadCliConfig(io, configFlag);
      if (flags.pairCode !== undefined && !/^\+?\d{6,15}$/.test(flags.pairCode.replace(/[\s().-]/g, ""))) {
        err(
          io,
          `--pair-code must be your phone number in international form, e.g. +15551234567 (got "${flags.pairCode}")`,
        );
        throw new CliExit(ExitCode.badInput);
      }
      const request = {
        config,
        home: cliPaths(io, configFlag).home,
        logger: createLogger(config.logging.level),
        print: (line: string) => out(io, line),
        ...(flags.account && { accountId: flags.account }),
        ...(flags.pairCode && { pairCode: flags.pairCode }),
      };
      try {
        await login[action](request);
      } catch (error) {
        err(io, `${channel} ${action} failed: ${(error as Error).message}`);
        throw new CliExit(ExitCode.failure);
      }
    };

  channels
    .command("login <channel>")
    .description("link this machine as a device of the account (WhatsApp: scan the QR code)")
    .option("--account <id>", "the account to link (default: default)")
    .option("--pair-code <number>", "link with a code typed on the phone instead of a QR code (your number, +<digits>)")
    .action(run("login"));

  channels
    .command("logout <channel>")
    .description("unlink the device and remove its credentials")
    .option("--account <id>", "the account to unlink (default: default)")
    .action(run("logout"));

  channels
    .command("status")
    .description("every account of every device-linked channel: linked, connected, last error")
    .option("--json", "print JSON")
    .action(async (flags: { json?: boolean }, cmd: Command) => {
      const configFlag = cmd.optsWithGlobals().config;
      const { config } = await loadCliConfig(io, configFlag);
      const home = cliPaths(io, configFlag).home;
      const rows: Array<{ channel: string } & ChannelAccountState> = [];
      for (const [channel, login] of Object.entries(io.channelLogins ?? {}))
        for (const state of await login.status({ config, home })) rows.push({ channel, ...state });
      if (flags.json) return printJson(io, { accounts: rows });
      if (rows.length === 0) out(io, "No device-linked channel accounts.");
      for (const row of rows) out(io, `${row.channel} ${row.accountId}: ${describe(row, now())}`);
    });
}
