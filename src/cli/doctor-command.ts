import type { Command } from "commander";
import type { Config, LoadedConfig, SwitchboardPaths } from "../config/index.js";
import type { AccountOverview } from "../inbound/account-overview.js";
import { resolveDefaultAgentId } from "../routing/resolve-route.js";
import { mainSessionKey } from "../routing/session-key-refs.js";
import { askGateway } from "./ask-gateway.js";
import type { DatabaseReport } from "./database-report.js";
import { type CliIo, cliPaths, loadCliConfig, out } from "./cli-io.js";
import { withCliState } from "./cli-state.js";
import { printJson } from "./connect-cli.js";
import { type GatewayTarget, findGateway } from "./gateway-target.js";
import { formatAge } from "./open-stores.js";
import { readSetAside } from "./inbox-report.js";
import { type OutboxReport, readOutboxReport } from "./outbox-report.js";

/** An MCP server as doctor reports it: from the running gateway, or only its config when none runs. */
interface McpReport {
  name: string;
  transport: "stdio" | "http";
  /** undefined when no gateway runs (servers are connected by the gateway at start) */
  state?: string;
  tools?: string[];
  error?: string;
}

const list = (entries: readonly string[]) => (entries.length ? entries.join(", ") : "nobody");

function accountLine(account: AccountOverview, label: string): string {
  const owners = `${list(account.owners)}${account.ownersFrom === "allowFrom" ? " (from allowFrom: no owners list)" : ""}`;
  const dms =
    account.dmPolicy === "disabled"
      ? "owners only (dmPolicy disabled)"
      : account.dmSenders.includes("*")
        ? "everyone"
        : account.dmPolicy === "pairing"
          ? `${list(account.dmSenders)} and the senders an owner approves by pairing code`
          : list(account.dmSenders);
  return `  ${label}: owners ${owners}; command users ${list(account.commandUsers)}; DMs from ${dms}`;
}

/** The outbox in a few lines: what waits (and why), what failed for good. */
function outboxLines(outbox: OutboxReport, now: number): string[] {
  const waiting =
    outbox.pending === 0
      ? "outbox: nothing waiting to be delivered"
      : `outbox: ${outbox.pending} waiting to be delivered (${outbox.retrying} retrying; the oldest for ${formatAge(outbox.oldestPendingAgeMs ?? 0)}${outbox.lastError ? `; last error ${outbox.lastError}` : ""})`;
  const failed = outbox.failed
    .slice(0, 5)
    .map(
      (f) => `  failed ${formatAge(now - f.at)} ago: ${f.kind} to ${f.to} (${f.sessionKey}): ${f.reason}: ${f.message}`,
    );
  return [waiting, `outbox: ${outbox.failed.length} failed deliveries kept`, ...failed];
}

/** What an owner should act on in the outbox. */
function outboxWarnings(outbox: OutboxReport): string[] {
  return [
    ...(outbox.retrying > 0
      ? [
          `${outbox.retrying} message(s) wait for a platform that keeps failing (${outbox.lastError}). The gateway retries them with backoff for up to retry.maxAgeMs (12 h by default), also across restarts; check the channel account.`,
        ]
      : []),
    ...(outbox.failed.length > 0
      ? [
          `${outbox.failed.length} message(s) could not be delivered (${[...new Set(outbox.failed.map((f) => f.reason))].join(", ")}); /status in the chat shows the session's.`,
        ]
      : []),
  ];
}

/** The outbox and the set-aside inbox from the state; empty when its database cannot be used (doctor warns of that). */
async function readQueues(io: CliIo, config: Config, paths: SwitchboardPaths, at: number, usable: boolean) {
  if (!usable) return { outbox: { pending: 0, retrying: 0, failed: [] } as OutboxReport, setAside: [] };
  return withCliState(io, config, paths, async ({ state }) => ({
    outbox: await readOutboxReport(state, paths, at),
    setAside: await readSetAside(state, paths),
  }));
}

type DoctorFlags = { json?: boolean; url?: string; token?: string };
type Queues = Awaited<ReturnType<typeof readQueues>>;

/** What doctor found: the JSON it prints, and the lines only the text report needs. */
interface DoctorReport extends Queues {
  loaded: LoadedConfig;
  accounts: AccountOverview[];
  /** `accountLabel` of each account, in order */
  labels: string[];
  mcp: McpReport[];
  database: DatabaseReport;
  databaseLines: string[];
  warnings: string[];
  suggestions: string[];
  mainSession: string;
}

function mcpWarning(server: McpReport): string {
  return `MCP server "${server.name}" is ${server.state}${server.error ? `: ${server.error}` : ""}. Its tools are missing until it connects; the gateway keeps retrying. Check mcp.servers.${server.name} in the config.`;
}

/** doctor's warning about set-aside hand-off rows, if any. */
function handoffWarning(report: DatabaseReport): string[] {
  const n = report.handoffSetAside?.length ?? 0;
  if (!n) return [];
  // Schema-qualified, so the hint works pasted into psql whatever its search_path.
  const table = `"${(report.schema ?? "switchboard").replaceAll('"', '""')}".inbound_handoff`;
  return [
    `${n} inbound message(s) another gateway stored for the owner were set aside in inbound_handoff after failing too often (see the "hand-off row" lines): their senders were answered, but they did not run. Fix the reason, then make them wait again with \`UPDATE ${table} SET set_aside_at = NULL, attempts = 0, created_at = now() WHERE id = <id>\` (a fresh created_at: otherwise the row is set aside again at its next failure; docs/scale-out.md).`,
  ];
}

/** What an owner should act on, most general first. */
function doctorWarnings(
  shared: string | undefined,
  mcp: McpReport[],
  database: DatabaseReport,
  { outbox, setAside }: Queues,
): string[] {
  const failed = mcp.filter((server) => server.state !== undefined && server.state !== "connected");
  return [
    ...(shared ? [shared] : []),
    ...failed.map(mcpWarning),
    ...outboxWarnings(outbox),
    ...(database.problem ? [`the state's database cannot be used: ${database.problem}`] : []),
    ...handoffWarning(database),
    ...(setAside.length > 0
      ? [
          `${setAside.length} inbound message(s) set aside: their turn stopped the gateway at every start, so they are not answered. Look with \`switchboard inbox list\`, then \`switchboard inbox retry <id>\` or \`drop <id>\`.`,
        ]
      : []),
  ];
}

async function readDoctorReport(
  io: CliIo,
  configFlag: string | undefined,
  flags: DoctorFlags,
  now: () => number,
): Promise<DoctorReport> {
  const loaded = await loadCliConfig(io, configFlag);
  const { config } = loaded;
  const { accountLabel, accountOverviews, pairingSuggestions, sharedDmWarning } = await import(
    "../inbound/account-overview.js" // loaded with the command, not at start (src/cli/main.ts)
  );
  const accounts = accountOverviews(config);
  const mcp = await mcpReports(config, await findGateway(io, config, configFlag, flags));
  // pg loads with the command that needs it, not at every start (src/cli/main.ts)
  const { databaseLines, readDatabaseReport } = await import("./database-report.js");
  const database = await readDatabaseReport(config, io.env);
  const queues = await readQueues(io, config, cliPaths(io, configFlag), now(), !database.problem);
  return {
    loaded,
    accounts,
    labels: accounts.map(accountLabel),
    mcp,
    database,
    databaseLines: databaseLines(database, cliPaths(io, configFlag).home),
    ...queues,
    warnings: doctorWarnings(sharedDmWarning(config), mcp, database, queues),
    suggestions: pairingSuggestions(config),
    mainSession: mainSessionKey(resolveDefaultAgentId(config), config.session.mainKey),
  };
}

function printDoctorJson(io: CliIo, report: DoctorReport): void {
  const { loaded, mainSession, accounts, mcp, database, outbox, setAside, warnings, suggestions } = report;
  const { session } = loaded.config;
  printJson(io, {
    config: { path: loaded.path, exists: loaded.exists, valid: true },
    session: { dmScope: session.dmScope, mainKey: session.mainKey, scope: session.scope, mainSession },
    accounts,
    mcp,
    database,
    outbox,
    setAside,
    warnings,
    suggestions,
  });
}

/** The config, DM sessions, accounts and MCP servers, as text. */
function printSetup(io: CliIo, report: DoctorReport): void {
  const { loaded, accounts, mcp } = report;
  const { dmScope } = loaded.config.session;
  out(io, `config: ${loaded.path} (${loaded.exists ? "valid" : "not found, every default applies"})`);
  out(
    io,
    dmScope === "main"
      ? `DM sessions: dmScope "main": every DM shares ${report.mainSession}`
      : `DM sessions: dmScope "${dmScope}": each sender has a DM session of their own`,
  );
  out(
    io,
    accounts.length
      ? "channel accounts:"
      : "channel accounts: none configured (only the web and terminal chat, where you are the owner)",
  );
  for (const [i, account] of accounts.entries()) out(io, accountLine(account, report.labels[i]!));
  if (mcp.length) out(io, "MCP servers:");
  for (const server of mcp)
    out(
      io,
      `  ${server.name} (${server.transport}): ${server.state === undefined ? "not checked (no gateway running; servers connect when it starts)" : `${server.state}, ${server.tools?.length ?? 0} tools`}`,
    );
}

/** The state (database, outbox, inbox), then warnings and suggestions, as text. */
function printState(io: CliIo, report: DoctorReport, now: () => number): void {
  const { outbox, setAside, warnings } = report;
  for (const line of report.databaseLines) out(io, line);
  for (const line of outboxLines(outbox, now())) out(io, line);
  out(io, `inbox: ${setAside.length} message(s) set aside`);
  for (const entry of setAside) out(io, `  ${entry.id} ${entry.channel}:${entry.chatId}: ${entry.reason}`);
  for (const warning of warnings) out(io, `\nwarning: ${warning}`);
  for (const suggestion of report.suggestions) out(io, `\nsuggestion: ${suggestion}`);
  if (!warnings.length) out(io, "no warnings");
}

/** `switchboard doctor [--json]`: the config file, how DMs map to sessions, who owns each account, the outbox, and warnings. */
export function registerDoctorCommand(program: Command, io: CliIo, now: () => number): void {
  program
    .command("doctor")
    .description("check the setup: config, DM sessions, owners per channel account, the outbox, warnings (exit 0)")
    .option("--json", "print JSON")
    .option("--url <url>", "gateway URL asked for MCP server states (default: the one this home's gateway.lock names)")
    .option("--token <token>", "gateway token (default $SWITCHBOARD_GATEWAY_TOKEN or gateway.auth.token)")
    .action(async (flags: DoctorFlags, cmd: Command) => {
      const report = await readDoctorReport(io, cmd.optsWithGlobals().config, flags, now);
      if (flags.json) return printDoctorJson(io, report);
      printSetup(io, report);
      printState(io, report, now);
    });
}

/** The configured MCP servers, with the running gateway's view of each when one answers. */
async function mcpReports(
  config: Awaited<ReturnType<typeof loadCliConfig>>["config"],
  target: GatewayTarget,
): Promise<McpReport[]> {
  const servers = Object.entries(config.mcp.servers);
  if (!servers.length) return [];
  const live = await askGateway<{ mcp?: McpReport[] }>(target, "status");
  return servers.map(([name, server]) => {
    const seen = live.value?.mcp?.find((s) => s.name === name);
    const transport = "url" in server ? "http" : "stdio";
    return seen
      ? { name, transport, state: seen.state, tools: seen.tools, ...(seen.error && { error: seen.error }) }
      : { name, transport };
  });
}
