import type { Command } from "commander";
import { ErrorCodes, isSwitchboardError } from "../errors.js";
import { createMemoryLogger } from "../logger.js";
import type { MigrationResult } from "../migrate/migrate-home.js";
import type { SideContext } from "../migrate/open-side.js";
import type { SideCounts } from "../migrate/side-contents.js";
import { type CliIo, CliExit, ExitCode, cliPaths, err, loadCliConfig, out } from "./cli-io.js";
import { progressBar } from "./import-command.js";

type Backend = "local" | "postgres";

interface StateFlags {
  config?: string;
  json?: boolean;
  to?: string;
  url?: string;
  schema?: string;
}

/** The home, its config and the database flags, as the state modules take them (loaded with the command). */
async function contextOf(io: CliIo, flags: StateFlags): Promise<SideContext> {
  const { config } = await loadCliConfig(io, flags.config);
  const paths = cliPaths(io, flags.config);
  return {
    config,
    paths,
    homeDir: io.homeDir ?? paths.home,
    env: { ...io.env },
    logger: createMemoryLogger(),
    ...(flags.url !== undefined && { url: flags.url }),
    ...(flags.schema !== undefined && { schema: flags.schema }),
  };
}

/** Ends the command on a state error: bad input (a flag, a url, a non-empty target, a running gateway) exits 2, the rest 1. */
function exitOn(io: CliIo, error: unknown): never {
  if (!isSwitchboardError(error)) throw error;
  err(io, error.message);
  const bad = error.code === ErrorCodes.INVALID_ARGUMENT || error.code === ErrorCodes.CONFIG_INVALID;
  throw new CliExit(bad ? ExitCode.badInput : ExitCode.failure);
}

/** Prints counts as aligned lines (`table sessions:main  3`). */
function printCounts(io: CliIo, counts: SideCounts): void {
  const lines = Object.entries(counts);
  if (lines.length === 0) out(io, "(empty: no rows, transcripts or workspace files)");
  const width = Math.max(0, ...lines.map(([line]) => line.length));
  for (const [line, n] of lines) out(io, `${line.padEnd(width)}  ${n}`);
}

/** `state status`: the backend, where it is, its schema version (PostgreSQL) and what it holds; no gateway needed. */
async function statusAction(io: CliIo, flags: StateFlags): Promise<void> {
  const context = await contextOf(io, flags);
  const backend = context.config.state.backend;
  const { openSide } = await import("../migrate/open-side.js");
  const { countSide } = await import("../migrate/side-contents.js");
  try {
    const side = await openSide(backend, context, true);
    try {
      // A schema no gateway or migration created yet holds nothing (and has no tables to ask).
      const empty = side.schemaVersion === 0;
      const counts = empty ? {} : await countSide(side, await side.tables(), await side.agents());
      const report = { backend, where: side.where, schemaVersion: side.schemaVersion, counts };
      if (flags.json) return out(io, JSON.stringify(report, null, 2));
      out(io, `backend ${backend}: ${side.where}`);
      if (side.schemaVersion !== undefined) out(io, `schema version ${side.schemaVersion}`);
      printCounts(io, counts);
    } finally {
      await side.close();
    }
  } catch (error) {
    exitOn(io, error);
  }
}

/** The count check, side by side, and what to do next. */
function printMigration(io: CliIo, result: MigrationResult, where: { from: string; to: string }): void {
  const lines = [...new Set([...Object.keys(result.source), ...Object.keys(result.target)])];
  const width = Math.max(4, ...lines.map((line) => line.length));
  out(io, `from ${where.from}`);
  out(io, `to   ${where.to}`);
  out(io, `${"".padEnd(width)}  source  target`);
  for (const line of lines)
    out(
      io,
      `${line.padEnd(width)}  ${String(result.source[line] ?? 0).padStart(6)}  ${String(result.target[line] ?? 0).padStart(6)}`,
    );
  out(io, result.countsMatch ? "count check: ok" : "count check: FAILED (see the counts above)");
}

/** The direction asked for: the backend copied from, and the one copied to. */
function directionOf(io: CliIo, to: string | undefined): { from: Backend; to: Backend } {
  if (to === "postgres") return { from: "local", to: "postgres" };
  if (to === "local") return { from: "postgres", to: "local" };
  err(
    io,
    `--to ${to ?? "(missing)"}: use --to postgres (this home into PostgreSQL) or --to local (PostgreSQL into this home)`,
  );
  throw new CliExit(ExitCode.badInput);
}

/** Opens both sides and copies, under the home's gateway lock. */
async function runMigration(io: CliIo, context: SideContext, direction: { from: Backend; to: Backend }) {
  const { openSide } = await import("../migrate/open-side.js");
  const { migrateHome } = await import("../migrate/migrate-home.js");
  const source = await openSide(direction.from, context, true);
  try {
    const target = await openSide(direction.to, context, false);
    const bar = await progressBar(io, "migrating [{bar}] {value}/{total} rows, transcripts and files");
    try {
      const result = await migrateHome(source, target, (done, total) => bar.update(done, total));
      return { result, where: { from: source.where, to: target.where } };
    } finally {
      bar.stop();
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/** `state migrate --to <backend>`: the home's state into an empty target, then the count check (exit 1 when it differs). */
async function migrateAction(io: CliIo, flags: StateFlags): Promise<void> {
  const direction = directionOf(io, flags.to);
  const context = await contextOf(io, flags);
  const { acquireGatewayLock } = await import("../gateway/gateway-lock.js");
  let migrated: Awaited<ReturnType<typeof runMigration>>;
  try {
    // The gateway's own lock: refused while a gateway runs on the home, and none starts until the copy is done.
    const lock = await acquireGatewayLock(context.paths.home, { port: 0 });
    try {
      migrated = await runMigration(io, context, direction);
    } finally {
      await lock.release();
    }
  } catch (error) {
    exitOn(io, error);
  }
  if (flags.json) out(io, JSON.stringify({ ...migrated.where, ...migrated.result }, null, 2));
  else printMigration(io, migrated.result, migrated.where);
  if (!migrated.result.countsMatch) throw new CliExit(ExitCode.failure);
  if (!flags.json)
    out(io, `next: set state.backend to "${direction.to}" in ${context.paths.configFile}, then start the gateway`);
}

/** `switchboard state status|migrate`: the state's backend and contents, and moving a home between backends. */
export function registerStateCommand(program: Command, io: CliIo): void {
  const state = program
    .command("state")
    .description("the gateway's durable state: where it is, what it holds, moving it");
  state
    .command("status")
    .description("the backend, its schema version (PostgreSQL) and the rows per table; no gateway needed")
    .option("--json", "print JSON")
    .option("--config <file>", "config file")
    .action((_flags: StateFlags, cmd: Command) => statusAction(io, cmd.optsWithGlobals()));
  state
    .command("migrate")
    .description("copy this home's state into an EMPTY target on the other backend, then compare the counts")
    .requiredOption("--to <backend>", "postgres (this home into PostgreSQL) or local (PostgreSQL into this home)")
    .option("--url <url>", "the PostgreSQL database (default: state.postgres.url, else SWITCHBOARD_DATABASE_URL)")
    .option("--schema <name>", "the PostgreSQL schema (default: state.postgres.schema)")
    .option("--json", "print the counts as JSON")
    .option("--config <file>", "config file")
    .action((_flags: StateFlags, cmd: Command) => migrateAction(io, cmd.optsWithGlobals()));
}
