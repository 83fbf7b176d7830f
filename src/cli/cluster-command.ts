import type { Command } from "commander";
import type { Config } from "../config/index.js";
import {
  CLUSTER_SCHEMA_VERSION,
  type ClusterStatus,
  LOCAL_CLUSTER_NOTE,
  type MemberView,
} from "../cluster/cluster-status.js";
import { isSwitchboardError } from "../errors.js";
import { type CliIo, CliExit, ExitCode, err, loadCliConfig, out } from "./cli-io.js";

interface ClusterFlags {
  json?: boolean;
  config?: string;
}

/** One member as a line: node (as its incarnation, node id + random), its role and address, where it runs, whether it lives, its last beat, what it holds. */
function memberLine(member: MemberView): string {
  const leases = member.leases.map((lease) => `${lease.name}@${lease.fence}`).join(", ") || "-";
  const state = member.alive ? "alive" : "dead (liveness lock gone)";
  const beat = `${(member.heartbeatAgeMs / 1000).toFixed(1)}s ago`;
  const holds = `sessions ${member.sessionsOwned}  partitions ${member.partitions}  accounts ${member.accounts.join(", ") || "-"}`;
  return `${member.incarnation}  ${member.role} at ${member.address ?? "-"}  ${member.host} pid ${member.pid} port ${member.port}  ${state}  heartbeat ${beat}  ${holds}  leases ${leases}`;
}

/** The members as the database lists them; a schema no gateway joined yet has none. */
async function readStatus(io: CliIo, config: Config, keys: boolean): Promise<{ status: ClusterStatus; where: string }> {
  // Loaded with the command, not at start: `--help` never loads pg (test/bin/cli-build.test.ts).
  const { openCliDatabase } = await import("./cli-database.js");
  const { readClusterStatus } = await import("../cluster/cluster-status.js");
  const database = await openCliDatabase(config, { ...io.env }, true);
  try {
    const where = `${database.shownUrl} (schema ${database.schema})`;
    if (database.schemaVersion < CLUSTER_SCHEMA_VERSION) return { status: { backend: "postgres", members: [] }, where };
    return { status: await readClusterStatus(database.pool, { keys }), where };
  } finally {
    await database.close();
  }
}

/** `cluster status`: reads the database, so it works with no gateway running. */
async function statusAction(io: CliIo, flags: ClusterFlags): Promise<void> {
  const { config } = await loadCliConfig(io, flags.config);
  if (config.state.backend === "local") {
    if (flags.json) return out(io, JSON.stringify({ backend: "local", note: LOCAL_CLUSTER_NOTE }, null, 2));
    return out(io, LOCAL_CLUSTER_NOTE);
  }
  try {
    const { status, where } = await readStatus(io, config, flags.json === true);
    if (flags.json) return out(io, JSON.stringify(status, null, 2));
    out(io, `cluster on ${where}: ${status.members.length} member(s)`);
    for (const member of status.members) out(io, memberLine(member));
  } catch (error) {
    if (!isSwitchboardError(error)) throw error;
    err(io, error.message);
    throw new CliExit(ExitCode.failure);
  }
}

/** Registers `switchboard cluster status`. */
export function registerClusterCommand(program: Command, io: CliIo): void {
  const cluster = program.command("cluster").description("gateways sharing one PostgreSQL schema");
  cluster
    .command("status")
    .description(
      "list the gateways of the schema: node id (with its incarnation), role (owner or standby), address, host, pid, port, last heartbeat, sessions owned (their keys with --json), accounts and leases held",
    )
    .option("--json", "print JSON")
    .option("--config <file>", "config file")
    .action((_flags: ClusterFlags, cmd: Command) => statusAction(io, cmd.optsWithGlobals()));
}
