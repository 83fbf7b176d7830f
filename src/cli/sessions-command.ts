import type { Command } from "commander";
import { closestMatch } from "../config/suggest.js";
import { type CliIo, CliExit, ExitCode, cliPaths, err, loadCliConfig, out } from "./cli-io.js";
import { withCliState } from "./cli-state.js";
import { formatAge, openStoresReadOnly } from "./open-stores.js";
import { registerSessionsPruneCommand } from "./sessions-prune-command.js";

interface SessionsFlags {
  json?: boolean;
  active?: string;
  agent?: string;
}

type StoreViews = Awaited<ReturnType<typeof openStoresReadOnly>>;

/** The `--active` minutes, checked; exits 2 for a value that is not a positive number. */
function activeMinutes(io: CliIo, flags: SessionsFlags): number | undefined {
  const active = flags.active === undefined ? undefined : Number(flags.active);
  if (active !== undefined && !(Number.isFinite(active) && active > 0)) {
    err(io, `--active must be a positive number of minutes, got "${flags.active}"`);
    throw new CliExit(ExitCode.badInput);
  }
  return active;
}

/** Exits 2 when `--agent` names no agent, with the nearest name. */
function checkAgent(io: CliIo, flags: SessionsFlags, views: StoreViews): void {
  const agents = views.map((view) => view.agentId);
  if (!flags.agent || agents.includes(flags.agent.toLowerCase())) return;
  const hint = closestMatch(flags.agent, agents);
  err(io, `unknown agent "${flags.agent}"${hint ? ` (did you mean ${hint}?)` : ""}; agents: ${agents.join(", ")}`);
  throw new CliExit(ExitCode.badInput);
}

/** Every session of the chosen agents, newest first. */
function sessionRows(io: CliIo, views: StoreViews, flags: SessionsFlags, active: number | undefined, at: number) {
  return views
    .filter((view) => !flags.agent || view.agentId === flags.agent.toLowerCase())
    .flatMap((view) => {
      if (view.problem) err(io, `warning: ${view.problem}`);
      const list = view.store?.list({ ...(active !== undefined && { activeMinutes: active }) }) ?? [];
      return list.map(({ key, parsed, entry }) => ({
        key,
        agentId: "agentId" in parsed ? parsed.agentId : view.agentId,
        kind: parsed.kind,
        channel: parsed.channel ?? entry.channel ?? entry.lastChannel,
        sessionId: entry.sessionId,
        updatedAt: entry.updatedAt,
        ageMs: at - entry.updatedAt,
        displayName: entry.displayName,
        model: entry.model,
        totalTokens: entry.totalTokens,
        sendPolicy: entry.sendPolicy,
        storePath: view.storePath,
      }));
    })
    .sort((a, b) => b.updatedAt - a.updatedAt);
}

/** Prints one line per session: age, kind, key, and what is notable about it. */
function printSessions(io: CliIo, rows: ReturnType<typeof sessionRows>): void {
  if (rows.length === 0) {
    out(io, "no sessions");
    return;
  }
  for (const row of rows) {
    const extra = [
      row.displayName,
      row.model,
      row.totalTokens !== undefined ? `${row.totalTokens} tokens` : undefined,
      row.sendPolicy === "deny" ? "send off" : undefined,
    ];
    const line = `${formatAge(row.ageMs).padStart(4)} ago  ${row.kind.padEnd(8)} ${row.key}  ${extra.filter(Boolean).join(" · ")}`;
    out(io, line.trimEnd());
  }
}

/** `switchboard sessions`: every session of every agent, newest first, read from the state (files or PostgreSQL). */
export function registerSessionsCommand(program: Command, io: CliIo, now: () => number): void {
  const sessions = program
    .command("sessions")
    .description("list sessions from the state (newest first)")
    .option("--json", "print a JSON array")
    .option("--active <minutes>", "only sessions with a turn in the last N minutes")
    .option("--agent <id>", "only this agent's sessions")
    .action(async (flags: SessionsFlags, cmd: Command) => {
      const configFlag = cmd.optsWithGlobals().config;
      const { config } = await loadCliConfig(io, configFlag);
      const active = activeMinutes(io, flags);
      const paths = cliPaths(io, configFlag);
      const rows = await withCliState(io, config, paths, async (opened) => {
        const views = await openStoresReadOnly(config, paths, opened, io.homeDir);
        checkAgent(io, flags, views);
        return sessionRows(io, views, flags, active, now());
      });
      if (flags.json) return out(io, JSON.stringify(rows, null, 2));
      printSessions(io, rows);
    });
  registerSessionsPruneCommand(sessions, io, now);
}
