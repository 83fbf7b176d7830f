import path from "node:path";
import type { Command } from "commander";
import type { PairingControl, PairingResult, PairingScope } from "../commands/pairing-control.js";
import { pairingListText, pairingResultText } from "../commands/pairing-text.js";
import { acquireGatewayLock } from "../gateway/gateway-lock.js";
import { createMemoryLogger } from "../logger.js";
import { DEFAULT_ACCOUNT_ID } from "../routing/normalize.js";
import { openLocalState } from "../state/local-state.js";
import type { StatePort } from "../state/state-port.js";
import { type CliIo, CliExit, ExitCode, cliPaths, err, loadCliConfig, out } from "./cli-io.js";
import { withCliState } from "./cli-state.js";
import { printJson } from "./connect-cli.js";
import { findGateway } from "./gateway-target.js";
import { GatewayCallError, type GatewayClient, connectGateway } from "./gateway-client.js";

interface PairingFlags {
  channel?: string;
  account?: string;
  json?: boolean;
  url?: string;
  token?: string;
}

/** Where the work happens: the running gateway, or the stored state when none runs. */
type Reach = { gateway: GatewayClient } | { offline: true };

async function reach(io: CliIo, configFlag: string | undefined, flags: PairingFlags): Promise<Reach> {
  const { config } = await loadCliConfig(io, configFlag);
  // The gateway of this home (its gateway.lock names the port), unless --url says; none runs: the stored state.
  const target = await findGateway(io, config, configFlag, flags);
  if (target.namedBy === "none") return { offline: true };
  const { url, token } = target;
  try {
    return { gateway: await connectGateway(url, token, { timeoutMs: 1_500 }) };
  } catch (error) {
    // A gateway that answers and refuses us is running: its state must not be written behind its back.
    if (!(error instanceof GatewayCallError)) return { offline: true };
    err(io, `the gateway at ${url} refused the connection: ${error.message}`);
    throw new CliExit(ExitCode.failure);
  }
}

/** Runs `work` on the pairing table opened on `state`, and closes the table after. */
async function onTable<T>(state: StatePort, dir: string, work: (control: OfflineControl) => Promise<T>): Promise<T> {
  const { openPairingStore } = await import("../inbound/pairing-store.js"); // loaded with the command, not at start (src/cli/main.ts)
  const store = await openPairingStore({ state, path: path.join(dir, "pairing.json") });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/**
 * Runs `work` on the pairing table of the stored state. Reading needs no lock (as `status` reads);
 * writing holds the gateway's lock so no gateway starts meanwhile, and a gateway that holds it but
 * did not answer is named, with nothing written. On PostgreSQL the table is read in the database;
 * writing it is refused: the gateway holding the schema's writer lease writes pairing rows (a write
 * behind it would pass its fence and its image), so the owner is sent to a gateway.
 */
async function onStoredState<T>(
  io: CliIo,
  configFlag: string | undefined,
  mode: "read" | "write",
  work: (control: OfflineControl) => Promise<T>,
): Promise<T> {
  const paths = cliPaths(io, configFlag);
  const dir = path.join(paths.home, "state");
  const { config } = await loadCliConfig(io, configFlag);
  if (config.state.backend === "postgres") {
    if (mode === "read") return withCliState(io, config, paths, ({ state }) => onTable(state, dir, work));
    err(io, POSTGRES_NO_GATEWAY);
    throw new CliExit(ExitCode.failure);
  }
  const lock = mode === "write" ? await takeLock(io, paths.home) : undefined;
  const state = openLocalState({ dir, logger: createMemoryLogger(), readOnly: mode === "read" });
  try {
    return await onTable(state, dir, work);
  } finally {
    await state.close();
    await lock?.release();
  }
}

const POSTGRES_NO_GATEWAY =
  'no gateway answered, and state.backend is "postgres": codes are approved and denied by the running gateways (the one holding the schema writes them); pass --url (and --token) of any of them';

async function takeLock(io: CliIo, home: string) {
  try {
    return await acquireGatewayLock(home, { port: 0 });
  } catch (error) {
    err(io, `${(error as Error).message}. It did not answer at its address: pass --url (and --token) to reach it.`);
    throw new CliExit(ExitCode.failure);
  }
}

type OfflineControl = Pick<PairingControl, "list" | "approve" | "deny">;

const scopeOf = (flags: PairingFlags): PairingScope | undefined =>
  flags.channel === undefined
    ? undefined
    : { channel: flags.channel.toLowerCase(), accountId: flags.account ?? DEFAULT_ACCOUNT_ID };

const scopeParams = (flags: PairingFlags) => {
  const scope = scopeOf(flags);
  return scope ? { channel: scope.channel, accountId: scope.accountId } : {};
};

function withFlags(command: Command): Command {
  return command
    .option("--channel <name>", "only this channel's codes (telegram, discord, whatsapp)")
    .option("--account <id>", "with --channel: only this account's codes (default: default)")
    .option("--json", "print JSON")
    .option("--url <url>", "gateway URL (default ws://127.0.0.1:<gateway.port>)")
    .option("--token <token>", "gateway token (default $SWITCHBOARD_GATEWAY_TOKEN or gateway.auth.token)");
}

/** Approves or denies a code through the running gateway, or on the stored state; exits 1 when it did not work. */
async function verdictAction(
  io: CliIo,
  verdict: "approve" | "deny",
  code: string,
  flags: PairingFlags,
  cmd: Command,
): Promise<void> {
  const configFlag = cmd.optsWithGlobals().config;
  const wanted = code.trim().toUpperCase();
  const where = await reach(io, configFlag, flags);
  const result =
    "gateway" in where
      ? await callAndClose(where.gateway, (g) =>
          g.call<PairingResult>(`pairing.${verdict}`, { code: wanted, ...scopeParams(flags) }),
        )
      : await onStoredState(io, configFlag, "write", (store) => store[verdict](wanted, "cli", scopeOf(flags)));
  if (flags.json) printJson(io, { ...result, gateway: "gateway" in where });
  else {
    out(io, pairingResultText(wanted, verdict === "approve" ? "approved" : "denied", result));
    if (result.ok && verdict === "approve" && !("gateway" in where))
      out(io, "No gateway runs: the sender is told when it starts.");
  }
  if (!result.ok) throw new CliExit(ExitCode.failure);
}

/** `switchboard pairing list|approve <code>|deny <code>`: DM pairing, through the running gateway or on the stored state. */
export function registerPairingCommand(program: Command, io: CliIo, now: () => number): void {
  const pairing = program
    .command("pairing")
    .description("DM pairing codes of unknown senders: list, approve <code>, deny <code>");

  withFlags(pairing.command("list").description("codes waiting for an owner, and the senders let in")).action(
    async (flags: PairingFlags, cmd: Command) => {
      const configFlag = cmd.optsWithGlobals().config;
      const where = await reach(io, configFlag, flags);
      const list =
        "gateway" in where
          ? await callAndClose(where.gateway, (g) =>
              g.call<ReturnType<PairingControl["list"]>>("pairing.list", scopeParams(flags)),
            )
          : await onStoredState(io, configFlag, "read", async (store) => store.list(scopeOf(flags)));
      if (flags.json) printJson(io, list);
      else out(io, pairingListText(list, now()));
    },
  );

  for (const verdict of ["approve", "deny"] as const) {
    withFlags(
      pairing
        .command(`${verdict} <code>`)
        .description(verdict === "approve" ? "let the code's sender in and tell them" : "refuse the code"),
    ).action((code: string, flags: PairingFlags, cmd: Command) => verdictAction(io, verdict, code, flags, cmd));
  }
}

async function callAndClose<T>(client: GatewayClient, call: (client: GatewayClient) => Promise<T>): Promise<T> {
  try {
    return await call(client);
  } finally {
    await client.close();
  }
}
