import type { Command } from "commander";
import type { Config, SwitchboardPaths } from "../config/index.js";
import { type GatewayLockInfo, acquireGatewayLock, readGatewayLock } from "../gateway/gateway-lock.js";
import { createMemoryLogger } from "../logger.js";
import type { PrunedItem } from "../sessions/retention/prune-sessions.js";
import { PRUNE_TARGETS, type PruneTarget, parseAge, retentionPlan } from "../sessions/retention/retention-plan.js";
import { lockUrl } from "./gateway-target.js";
import { type CliIo, CliExit, ExitCode, cliPaths, err, loadCliConfig, out } from "./cli-io.js";
import { connectGateway } from "./gateway-client.js";
import { formatAge } from "./open-stores.js";

interface PruneFlags {
  dryRun?: boolean;
  olderThan?: string;
  kind?: string[];
  json?: boolean;
  url?: string;
  token?: string;
}

/** What one prune pass did, and who did it. */
interface PruneOutcome {
  source: "gateway" | "files";
  dryRun: boolean;
  items: PrunedItem[];
}

function badInput(io: CliIo, line: string): never {
  err(io, line);
  throw new CliExit(ExitCode.badInput);
}

function parseTargets(io: CliIo, kinds: string[] | undefined): PruneTarget[] | undefined {
  if (!kinds) return undefined;
  const targets = kinds.flatMap((k) => k.split(",")).map((k) => k.trim().toLowerCase());
  for (const target of targets)
    if (!(PRUNE_TARGETS as readonly string[]).includes(target))
      badInput(
        io,
        `--kind ${target} is not something prune removes: use ${PRUNE_TARGETS.join(", ")} (main, DM and group sessions are removed one at a time with the gateway's sessions.delete)`,
      );
  return targets as PruneTarget[];
}

function kilobytes(bytes: number): string {
  return bytes >= 1_048_576 ? `${(bytes / 1_048_576).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}

function printOutcome(io: CliIo, outcome: PruneOutcome, holder: string): void {
  const verb = outcome.dryRun ? "would remove" : "removed";
  for (const item of outcome.items) {
    const what = item.what === "session" ? `session  ${item.kind!.padEnd(8)} ${item.key}` : `archive  ${item.file}`;
    out(io, `${verb} ${what}  (${formatAge(item.ageMs)} old, ${kilobytes(item.bytes)})`);
  }
  const sessions = outcome.items.filter((i) => i.what === "session").length;
  const archives = outcome.items.length - sessions;
  const bytes = outcome.items.reduce((sum, i) => sum + i.bytes, 0);
  out(
    io,
    `${verb} ${sessions} session${sessions === 1 ? "" : "s"} and ${archives} archived transcript${archives === 1 ? "" : "s"} (${kilobytes(bytes)}) ${holder}${outcome.dryRun ? "; nothing changed" : ""}`,
  );
}

/** What a prune run asks for, whoever does it. */
interface PruneRequest {
  dryRun: boolean;
  olderThanMs?: number;
  targets?: PruneTarget[];
}

/** The running gateway holds the files: it does the pass (`sessions.prune`). */
async function pruneThroughGateway(
  io: CliIo,
  config: Config,
  holder: GatewayLockInfo,
  flags: PruneFlags,
  request: PruneRequest,
): Promise<PruneOutcome> {
  const url = flags.url ?? lockUrl(holder, config);
  const token = flags.token ?? io.env.SWITCHBOARD_GATEWAY_TOKEN ?? config.gateway.auth.token;
  const client = await connectGateway(url, token).catch((error: Error) =>
    badInput(
      io,
      `a gateway (pid ${holder.pid}) runs but ${url} did not answer (${error.message}); pass --url and --token, or stop it`,
    ),
  );
  try {
    const result = await client.call<Omit<PruneOutcome, "source">>("sessions.prune", {
      dryRun: request.dryRun,
      ...(request.olderThanMs !== undefined && { olderThanMs: request.olderThanMs }),
      ...(request.targets && { kinds: request.targets }),
    });
    return { source: "gateway", ...result };
  } finally {
    await client.close();
  }
}

/** No gateway: take its lock, so none starts while the files change, and prune them directly. */
async function pruneFiles(
  io: CliIo,
  config: Config,
  paths: SwitchboardPaths,
  request: PruneRequest,
  now: () => number,
): Promise<PruneOutcome> {
  const lock = await acquireGatewayLock(paths.home, { port: 0 });
  try {
    const plan = retentionPlan(config.session, {
      ...(request.olderThanMs !== undefined && { olderThanMs: request.olderThanMs }),
      ...(request.targets && { targets: request.targets }),
    });
    const homeDir = io.homeDir ?? paths.home;
    const { pruneHome } = await import("../sessions/retention/prune-home.js"); // loaded with the command, not at start (src/cli/main.ts)
    const items = await pruneHome({
      config,
      paths,
      homeDir,
      plan,
      dryRun: request.dryRun,
      logger: createMemoryLogger(),
      now,
    });
    return { source: "files", dryRun: request.dryRun, items };
  } finally {
    await lock.release();
  }
}

/** `switchboard sessions prune`: retention by hand, through the running gateway or on the files when none runs. */
export function registerSessionsPruneCommand(sessions: Command, io: CliIo, now: () => number): void {
  sessions
    .command("prune")
    .description("remove old hook, cron and sub-agent sessions and archived transcripts (session.retention)")
    .option("--dry-run", "list what would be removed, remove nothing")
    .option("--older-than <age>", "one age for everything chosen instead of the configured ones: 30d, 12h, 90m")
    .option("--kind <kind...>", `only these: ${PRUNE_TARGETS.join(", ")}`)
    .option("--json", "print a JSON object")
    .option("--url <url>", "gateway URL (default: the running gateway's port)")
    .option("--token <token>", "gateway token (default $SWITCHBOARD_GATEWAY_TOKEN or gateway.auth.token)")
    .action(async (flags: PruneFlags, cmd: Command) => {
      const configFlag = cmd.optsWithGlobals().config;
      const { config } = await loadCliConfig(io, configFlag);
      const olderThanMs = flags.olderThan === undefined ? undefined : parseAge(flags.olderThan);
      if (flags.olderThan !== undefined && olderThanMs === undefined)
        badInput(io, `--older-than must be an age above 0 such as 30d, 12h or 90m, got "${flags.olderThan}"`);
      const targets = parseTargets(io, flags.kind);
      const dryRun = flags.dryRun === true;
      const paths = cliPaths(io, configFlag);
      const request: PruneRequest = {
        dryRun,
        ...(olderThanMs !== undefined && { olderThanMs }),
        ...(targets && { targets }),
      };
      const holder = await readGatewayLock(paths.home);
      const outcome = holder
        ? await pruneThroughGateway(io, config, holder, flags, request)
        : await pruneFiles(io, config, paths, request, now);
      const by = holder ? `through the gateway (pid ${holder.pid})` : "in the files (no gateway runs)";
      // `--json` after `prune` lands on the parent `sessions` command, which has the same flag.
      if (flags.json || cmd.optsWithGlobals().json) return out(io, JSON.stringify(outcome, null, 2));
      printOutcome(io, outcome, by);
    });
}
