// `npm run bench -- cluster`: gateways on one PostgreSQL schema (docs/scale-out.md), as users run them.
import os from "node:os";
import { failovers as killOwners } from "./cluster-failover.js";
import { type Cluster, type Owners, gatewaysCpuMs, ownerOf, startCluster } from "./cluster-gateways.js";
import { postLoad, repliesReached, replyProblems } from "./cluster-load.js";
import { failoversMany, settled } from "./cluster-many.js";
import type { BenchTable } from "./harness.js";
import type { BenchPostgres } from "./postgres-server.js";

const TURNS = 2_000;
const SESSIONS = 200;
const IN_FLIGHT = 32;

/** One throughput run on a started cluster: a warm-up, then TURNS webhook turns over SESSIONS sessions spread over every gateway's port. */
async function throughput(cluster: Cluster): Promise<Record<string, string | number>> {
  const ports = cluster.gateways.map((g) => g.port);
  await postLoad(ports, { word: "warm", count: 200, sessions: 50, inFlight: IN_FLIGHT });
  await repliesReached(cluster.fake, "warm", 200, 120_000);
  const load = os.loadavg()[0]!;
  const cpuBefore = await gatewaysCpuMs(cluster.gateways);
  const started = performance.now();
  const posted = await postLoad(ports, { word: "turn", count: TURNS, sessions: SESSIONS, inFlight: IN_FLIGHT });
  const ended = await repliesReached(cluster.fake, "turn", TURNS, 300_000);
  const cpuEach = (await gatewaysCpuMs(cluster.gateways)).map((ms, i) => ms - cpuBefore[i]!);
  const cpu = cpuEach.reduce((sum, ms) => sum + ms, 0);
  const ownerCpu = cpuEach[cluster.gateways.indexOf(await ownerOf(cluster.gateways))] ?? 0;
  const problems = replyProblems(cluster.fake, "turn", TURNS);
  for (const gateway of cluster.gateways)
    for (const [msg, { count }] of gateway.problems()) problems.push(`logged ${count} x "${msg}"`);
  const retried = [...posted.retried].map(([status, n]) => `${n} x ${status || "no answer"}`).join(", ");
  return {
    owners: cluster.owners,
    gateways: cluster.gateways.length,
    "1-min load at start": Number(load.toFixed(1)),
    "all accepted s": Number((posted.acceptedMs / 1000).toFixed(2)),
    "all replied s": Number(((ended - started) / 1000).toFixed(2)),
    "msgs/s": Math.round((TURNS / (ended - started)) * 1000),
    "gateways' CPU ms/turn": Number((cpu / TURNS).toFixed(2)),
    "owner's CPU ms/turn": Number((ownerCpu / TURNS).toFixed(2)),
    "posts sent again": retried || "none",
    problems: problems.join("; ") || "none",
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** For each mode and cluster size run more than once: the median msgs/s and gateways' CPU per turn of its runs. */
function medians(rows: Array<Record<string, string | number>>): string[] {
  const kinds = [...new Set(rows.map((row) => `${row.owners} ${row.gateways}`))];
  return kinds.flatMap((kind) => {
    const runs = rows.filter((row) => `${row.owners} ${row.gateways}` === kind);
    if (runs.length < 2) return [];
    const rate = median(runs.map((row) => Number(row["msgs/s"])));
    const cpu = median(runs.map((row) => Number(row["gateways' CPU ms/turn"])));
    const [owners, size] = kind.split(" ");
    return [
      `owners ${owners}, ${size} gateway(s), median of ${runs.length} runs: ${rate} msgs/s, ${cpu} gateways' CPU ms/turn`,
    ];
  });
}

/** One run of `size` gateways in mode `owners`: its throughput row, then (`failovers` > 0, size > 1) its SIGKILLs' lines. */
async function clusterRun(pg: BenchPostgres, size: number, owners: Owners, failovers: number) {
  const cluster = await startCluster(pg, size, owners);
  try {
    // "many": the load starts once every gateway's core is open on its share.
    if (owners === "many") await settled(cluster.gateways, 0);
    const row = await throughput(cluster);
    if (size < 2 || failovers === 0) return { row, notes: [] };
    return {
      row,
      notes:
        owners === "one" ? await killOwners(cluster, failovers) : await failoversMany(cluster, failovers, SESSIONS),
    };
  } finally {
    await cluster.close();
  }
}

/** Options of {@link benchCluster}. */
export interface ClusterBenchOptions {
  /** how many gateways each throughput run starts (default 1 and 3) */
  sizes: number[];
  /** each size runs once per mode, the modes alternated (default "one" then "many") */
  owners: Owners[];
  /** SIGKILLs timed on the last of the largest clusters of each mode, after its throughput run (0: none) */
  failovers: number;
}

/** Why `options` cannot run, or undefined. */
function badOptions(options: ClusterBenchOptions): string | undefined {
  const size = options.sizes.find((n) => !Number.isInteger(n) || n < 1);
  const owners = options.owners.find((mode) => mode !== "one" && mode !== "many");
  if (size !== undefined || owners !== undefined || options.owners.length === 0)
    return "cluster: --gateways takes whole numbers >= 1 (e.g. --gateways=1,3), --owners one, many or both (--owners=one,many)";
  if (!Number.isInteger(options.failovers) || options.failovers < 0)
    return "cluster: --failovers takes a whole number >= 0";
  return undefined;
}

/**
 * Gateways on one PostgreSQL schema, as users run them: msgs/s of the same webhook load through one
 * gateway and through several (posted over every gateway's port), in each `cluster.owners` mode,
 * alternated: "one" (the owner runs every turn, standbys relay to it), "many" (each gateway runs its
 * share of the partitions); then the SIGKILLs of the largest cluster of each mode.
 */
export async function benchCluster(pg: BenchPostgres, options: ClusterBenchOptions): Promise<BenchTable> {
  const bad = badOptions(options);
  if (bad) throw new Error(bad);
  const rows: Array<Record<string, string | number>> = [];
  const notes: string[] = [];
  // The failovers run on the last of the largest clusters, after its throughput run (its state in place).
  const failoverAt = options.sizes.lastIndexOf(Math.max(...options.sizes));
  for (const [i, size] of options.sizes.entries())
    for (const owners of options.owners) {
      const run = await clusterRun(pg, size, owners, i === failoverAt ? options.failovers : 0);
      rows.push(run.row);
      notes.push(...run.notes);
    }
  notes.unshift(...medians(rows));
  notes.push(
    `msgs/s: from the first post to the fake Bot API holding every reply; the machine is shared (${os.cpus().length} cores), see the load column`,
  );
  return {
    title: `cluster: ${TURNS.toLocaleString("en-US")} webhook turns over ${SESSIONS} sessions, ${IN_FLIGHT} posts in flight, replies announced to the fake Bot API (real gateway processes, one PostgreSQL schema, offline model)`,
    rows,
    notes,
  };
}
