// `npm run bench -- cluster`: gateways on one PostgreSQL schema (docs/scale-out.md), as users run them.
import os from "node:os";
import { failovers } from "./cluster-failover.js";
import { type Cluster, gatewaysCpuMs, ownerOf, startCluster } from "./cluster-gateways.js";
import { postLoad, repliesReached, replyProblems } from "./cluster-load.js";
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

/** For each cluster size run more than once: the median msgs/s and gateways' CPU per turn of its runs. */
function medians(rows: Array<Record<string, string | number>>): string[] {
  const sizes = [...new Set(rows.map((row) => Number(row.gateways)))];
  return sizes.flatMap((size) => {
    const runs = rows.filter((row) => Number(row.gateways) === size);
    if (runs.length < 2) return [];
    const rate = median(runs.map((row) => Number(row["msgs/s"])));
    const cpu = median(runs.map((row) => Number(row["gateways' CPU ms/turn"])));
    return [`${size} gateway(s), median of ${runs.length} runs: ${rate} msgs/s, ${cpu} gateways' CPU ms/turn`];
  });
}

/** Options of {@link benchCluster}. */
export interface ClusterBenchOptions {
  /** how many gateways each throughput run starts (default 1 and 3) */
  sizes: number[];
  /** SIGKILLs of the owner timed on the largest cluster, after its throughput run (0: none) */
  failovers: number;
}

/**
 * Gateways on one PostgreSQL schema, as users run them: msgs/s of the same webhook load through one
 * gateway and through several (posted over every gateway's port: the owner runs every turn, standbys
 * relay to it), then the takeover after a SIGKILL of the owner.
 */
export async function benchCluster(pg: BenchPostgres, options: ClusterBenchOptions): Promise<BenchTable> {
  const bad = options.sizes.find((size) => !Number.isInteger(size) || size < 1);
  if (bad !== undefined || !Number.isInteger(options.failovers) || options.failovers < 0)
    throw new Error(
      "cluster: --gateways takes whole numbers >= 1 (e.g. --gateways=1,3), --failovers a whole number >= 0",
    );
  const rows: Array<Record<string, string | number>> = [];
  const notes: string[] = [];
  // The failovers run on the last of the largest clusters, after its throughput run (its state in place).
  const failoverAt = options.sizes.lastIndexOf(Math.max(...options.sizes));
  for (const [i, size] of options.sizes.entries()) {
    const cluster = await startCluster(pg, size);
    try {
      rows.push(await throughput(cluster));
      if (i === failoverAt && size > 1 && options.failovers > 0)
        notes.push(...(await failovers(cluster, options.failovers)));
    } finally {
      await cluster.close();
    }
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
