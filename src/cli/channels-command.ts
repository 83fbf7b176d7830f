import type { Command } from "commander";
import type { Config, SwitchboardPaths } from "../config/index.js";
import type { ChannelAccountState, ChannelLogin, ChannelLoginRequest } from "../delivery/channel-adapter.js";
import { withChannelStates } from "./cli-channel-state.js";
import { type CliIo, CliExit, ExitCode, cliPaths, createCliLogger, err, loadCliConfig, out } from "./cli-io.js";
import { askGateway } from "./ask-gateway.js";
import { printJson } from "./connect-cli.js";
import { findGateway } from "./gateway-target.js";

/** The channels of the table that link as a device, by id. */
async function loginsOf(io: CliIo): Promise<Map<string, ChannelLogin>> {
  const table = (await io.channels?.()) ?? [];
  return new Map(table.flatMap((channel) => (channel.login ? [[channel.id, channel.login] as const] : [])));
}

async function loginFor(io: CliIo, channel: string): Promise<ChannelLogin> {
  const logins = await loginsOf(io);
  const login = logins.get(channel.toLowerCase());
  if (login) return login;
  const known = [...logins.keys()];
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

/** Whether the account a request names has credentials here (only then is there something to unlink). */
async function isLinked(
  login: ChannelLogin,
  config: Config,
  request: Pick<ChannelLoginRequest, "home" | "state" | "accountId">,
): Promise<boolean> {
  const states = await login.status({ config, home: request.home, state: request.state });
  return states.some((state) => state.accountId === (request.accountId ?? "default") && state.linked);
}

type LoginFlags = { account?: string; pairCode?: string };
type StatusFlags = { json?: boolean; url?: string; token?: string };
type DeviceRow = { channel: string } & ChannelAccountState;
type TokenRow = { channel: string; accountId: string; kind: "token"; running: boolean | null };

function checkPairCode(io: CliIo, pairCode: string | undefined): void {
  if (pairCode === undefined || /^\+?\d{6,15}$/.test(pairCode.replace(/[\s().-]/g, ""))) return;
  err(io, `--pair-code must be your phone number in international form, e.g. +15551234567 (got "${pairCode}")`);
  throw new CliExit(ExitCode.badInput);
}

/** Links (`login`) or unlinks (`logout`) one account of a device-linked channel. */
async function runLogin(
  io: CliIo,
  action: "login" | "logout",
  channel: string,
  flags: LoginFlags,
  configFlag: string | undefined,
): Promise<void> {
  const login = await loginFor(io, channel);
  const { config } = await loadCliConfig(io, configFlag);
  checkPairCode(io, flags.pairCode);
  const paths = cliPaths(io, configFlag);
  await withChannelStates(io, config, paths, "write", async ({ states, where }) => {
    const request = {
      config,
      home: paths.home,
      state: states.forChannel(channel.toLowerCase()),
      where,
      logger: createCliLogger(io, config.logging.level),
      print: (line: string) => out(io, line),
      ...(flags.account && { accountId: flags.account }),
      ...(flags.pairCode && { pairCode: flags.pairCode }),
    };
    if (action === "logout" && !(await isLinked(login, config, request))) {
      out(io, `${channel} account "${request.accountId ?? "default"}" is not linked here; nothing to unlink.`);
      return;
    }
    try {
      await login[action](request);
    } catch (error) {
      err(io, `${channel} ${action} failed: ${(error as Error).message}`);
      throw new CliExit(ExitCode.failure);
    }
  });
}

/** The accounts of the device-linked channels, as their logins report them. */
async function deviceRows(
  io: CliIo,
  config: Config,
  paths: SwitchboardPaths,
  logins: Map<string, ChannelLogin>,
): Promise<DeviceRow[]> {
  const rows: DeviceRow[] = [];
  if (logins.size > 0)
    await withChannelStates(io, config, paths, "read", async ({ states }) => {
      for (const [channel, login] of logins) {
        // A channel absent from the config shows only accounts linked here (a login before the config is written).
        const configured = (config.channels as Record<string, unknown>)[channel] !== undefined;
        for (const state of await login.status({ config, home: paths.home, state: states.forChannel(channel) }))
          if (configured || state.linked) rows.push({ channel, ...state });
      }
    });
  return rows;
}

/** Token channels (Telegram, Discord) have nothing to link: whether the running gateway runs them. */
async function tokenRows(
  io: CliIo,
  config: Config,
  configFlag: string | undefined,
  flags: StatusFlags,
  logins: Map<string, ChannelLogin>,
): Promise<TokenRow[]> {
  const { configuredAccounts } = await import("../inbound/account-overview.js"); // loaded with the command, not at start (src/cli/main.ts)
  const tokenAccounts = configuredAccounts(config).filter((a) => !logins.has(a.channel));
  const live = tokenAccounts.length
    ? (await askGateway<{ channels?: string[] }>(await findGateway(io, config, configFlag, flags), "status")).value
    : undefined;
  return tokenAccounts.map((a) => ({
    ...a,
    kind: "token" as const,
    running: live ? (live.channels ?? []).includes(a.channel) : null,
  }));
}

function tokenRunning(running: boolean | null): string {
  if (running === null) return "no gateway answered (start it with npm start)";
  return running ? "running in the gateway" : "not running in the gateway (see its log)";
}

async function showStatus(
  io: CliIo,
  flags: StatusFlags,
  configFlag: string | undefined,
  now: () => number,
): Promise<void> {
  const { config } = await loadCliConfig(io, configFlag);
  const paths = cliPaths(io, configFlag);
  const logins = await loginsOf(io);
  const rows = await deviceRows(io, config, paths, logins);
  const tokens = await tokenRows(io, config, configFlag, flags, logins);
  if (flags.json) return printJson(io, { accounts: [...rows, ...tokens] });
  if (rows.length === 0 && tokens.length === 0) out(io, "No channel accounts are configured.");
  for (const row of rows) out(io, `${row.channel} ${row.accountId}: ${describe(row, now())}`);
  for (const row of tokens)
    out(io, `${row.channel} ${row.accountId}: token in the config, ${tokenRunning(row.running)}`);
}

/** `switchboard channels login|logout|status`: link a device-based channel (WhatsApp) and see every account. */
export function registerChannelsCommand(program: Command, io: CliIo, now: () => number): void {
  const channels = program
    .command("channels")
    .description("link channels that work as a linked device, and show their state");
  const run = (action: "login" | "logout") => (channel: string, flags: LoginFlags, cmd: Command) =>
    runLogin(io, action, channel, flags, cmd.optsWithGlobals().config);

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
    .description(
      "every configured channel account: device-linked ones (linked, connected, last error), token ones (running in the gateway or not)",
    )
    .option("--json", "print JSON")
    .option("--url <ws-url>", "the gateway to ask which channels run (default: the one this home's gateway.lock names)")
    .option("--token <token>", "gateway token (default: SWITCHBOARD_GATEWAY_TOKEN or gateway.auth.token)")
    .action((flags: StatusFlags, cmd: Command) => showStatus(io, flags, cmd.optsWithGlobals().config, now));
}
