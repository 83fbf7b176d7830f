import type { Command } from "commander";
import { type CliIo, cliPaths, loadCliConfig, out } from "./cli-io.js";
import { askGateway } from "./ask-gateway.js";
import { withCliState } from "./cli-state.js";
import { findGateway } from "./gateway-target.js";
import { formatAge, openStoresReadOnly } from "./open-stores.js";

type StatusFlags = { json?: boolean; url?: string; token?: string };
type StoreViews = Awaited<ReturnType<typeof openStoresReadOnly>>;

/** Each agent's store as the files hold it: session count, the five newest sessions, corrupt files set aside. */
function agentStatus(views: StoreViews, at: number) {
  return views.map((view) => ({
    agentId: view.agentId,
    storePath: view.storePath,
    sessions: view.store?.size() ?? 0,
    recent: (view.store?.list({ limit: 5 }) ?? []).map(({ key, entry }) => ({
      key,
      sessionId: entry.sessionId,
      ageMs: at - entry.updatedAt,
    })),
    corruptFiles: view.corruptFiles,
    ...(view.problem && { problem: view.problem }),
  }));
}

/** Prints each agent's store status as text. */
function printAgents(io: CliIo, agents: ReturnType<typeof agentStatus>): void {
  for (const agent of agents) {
    const count = `${agent.sessions} session${agent.sessions === 1 ? "" : "s"}`;
    out(io, `\nagent ${agent.agentId}: ${count}  (${agent.storePath})`);
    if (agent.problem) out(io, `  PROBLEM ${agent.problem}`);
    for (const file of agent.corruptFiles) out(io, `  corrupt file set aside: ${file}`);
    for (const row of agent.recent) out(io, `  ${formatAge(row.ageMs).padStart(4)} ago  ${row.key}`);
  }
}

/** The running gateway's status when it answers; else what the files say. */
async function statusAction(io: CliIo, now: () => number, flags: StatusFlags, cmd: Command): Promise<void> {
  const configFlag = cmd.optsWithGlobals().config;
  const loaded = await loadCliConfig(io, configFlag);
  const target = await findGateway(io, loaded.config, configFlag, flags);
  const live = await askGateway<LiveStatus>(target, "status");
  if (live.value) return printLive(io, live.value, !!flags.json);
  const paths = cliPaths(io, configFlag);
  const { agents, state } = await withCliState(io, loaded.config, paths, async (opened) => ({
    agents: agentStatus(await openStoresReadOnly(loaded.config, paths, opened, io.homeDir), now()),
    state: { backend: opened.backend, where: opened.where },
  }));
  const gateway = { running: target.namedBy === "lock", url: target.url, problem: live.problem };
  const status = { home: paths.home, config: { path: loaded.path, exists: loaded.exists }, state, gateway, agents };
  const source = state.backend === "local" ? "files" : "database";
  if (flags.json) return out(io, JSON.stringify({ source, ...status }, null, 2));
  out(io, `gateway ${live.problem}`);
  out(io, `        (what follows is read from the ${source})`);
  out(io, `home    ${status.home}`);
  if (state.backend !== "local") out(io, `state   ${state.where}`);
  out(io, `config  ${loaded.path}${loaded.exists ? "" : " (not found: defaults)"}`);
  printAgents(io, agents);
}

/** `switchboard status`: where state lives, session counts, recent sessions, corrupt files set aside. */
export function registerStatusCommand(program: Command, io: CliIo, now: () => number): void {
  program
    .command("status")
    .description("show where state lives, session counts, recent sessions and corrupt files set aside")
    .option("--json", "print a JSON object")
    .option("--url <url>", "gateway URL (default: the one this home's gateway.lock names)")
    .option("--token <token>", "gateway token (default $SWITCHBOARD_GATEWAY_TOKEN or gateway.auth.token)")
    .action((flags: StatusFlags, cmd: Command) => statusAction(io, now, flags, cmd));
}

interface LiveStatus {
  gateway: { pid: number; home: string; uptimeMs: number };
  model: { default: string; offline: boolean };
  lanes: Array<{ key: string; running: boolean; queued: number }>;
  runs: { active: Array<{ runId: string; sessionKey: string; status: string }> };
  outbox: { pending: number; failures: Array<{ sessionKey: string; lastError?: { message: string } }> };
  channels: string[];
  stores: Array<{ agentId: string; path: string; sessions: number; corruptMovedTo?: string }>;
  mcp?: Array<{ name: string; state: string; tools: string[]; error?: string }>;
}

function printLive(io: CliIo, status: LiveStatus, json: boolean): void {
  if (json) {
    out(io, JSON.stringify({ source: "gateway", ...status }, null, 2));
    return;
  }
  out(io, `gateway  pid ${status.gateway.pid}, up ${formatAge(status.gateway.uptimeMs)}, home ${status.gateway.home}`);
  out(io, `model    ${status.model.default}${status.model.offline ? " (offline, built in)" : ""}`);
  out(io, `channels ${status.channels.join(", ")}`);
  out(
    io,
    `runs     ${status.runs.active.length} active; lanes ${status.lanes.map((l) => `${l.key}${l.queued ? ` (+${l.queued} queued)` : ""}`).join(", ") || "idle"}`,
  );
  out(io, `outbox   ${status.outbox.pending} pending, ${status.outbox.failures.length} recent failures`);
  for (const failure of status.outbox.failures)
    out(io, `  failed: ${failure.sessionKey}: ${failure.lastError?.message ?? "unknown error"}`);
  for (const server of status.mcp ?? [])
    out(
      io,
      `mcp      ${server.name}: ${server.state}, ${server.tools.length} tools${server.error ? ` (${server.error})` : ""}`,
    );
  for (const store of status.stores) {
    out(
      io,
      `agent ${store.agentId}: ${store.sessions} sessions (${store.path})${store.corruptMovedTo ? `; corrupt file set aside: ${store.corruptMovedTo}` : ""}`,
    );
  }
}
