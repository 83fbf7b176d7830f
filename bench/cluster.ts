// `npm run bench -- cluster`: gateways on one PostgreSQL schema (docs/scale-out.md), as users run them.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { buildCli, isBuildFresh } from "../bin/cli-build.mjs";
import { type FakeTelegramServer, startFakeTelegramServer } from "../test/fakes/fake-telegram-server.js";
import { hooksConfig, postLoad, repliesReached, replyProblems } from "./cluster-load.js";
import type { BenchTable } from "./harness.js";
import type { BenchPostgres } from "./postgres-server.js";
import { processUsage } from "./process-usage.js";
import { type Gateway, startGateway, telegramConfig } from "./telegram-e2e.js";

const TURNS = 2_000;
const SESSIONS = 200;
const IN_FLIGHT = 32;

/** Gateways of one schema, each on a home of its own, and what they share. */
export interface Cluster {
  fake: FakeTelegramServer;
  gateways: Gateway[];
  /** starts one more gateway (node `gw-<n>`) on the schema */
  add(): Promise<Gateway>;
  close(): Promise<void>;
}

/** A fake Bot API and `size` gateways on a fresh schema of `pg`, started one after the other (the first owns it). */
export async function startCluster(pg: BenchPostgres, size: number): Promise<Cluster> {
  if (!isBuildFresh()) await buildCli();
  const fake = await startFakeTelegramServer();
  const schema = pg.freshSchema();
  const homes: string[] = [];
  const gateways: Gateway[] = [];
  const add = async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "sb-bench-cluster-"));
    homes.push(home);
    const config = {
      ...telegramConfig(fake.apiRoot),
      state: { backend: "postgres", postgres: { url: pg.url, schema } },
      gateway: { nodeId: `gw-${homes.length}` },
      hooks: hooksConfig,
    };
    const gateway = await startGateway(home, config);
    gateways.push(gateway);
    return gateway;
  };
  const cluster = {
    fake,
    gateways,
    add,
    async close() {
      await Promise.all(gateways.map((g) => g.stop()));
      await fake.close();
      await Promise.all(homes.map((home) => rm(home, { recursive: true, force: true })));
    },
  };
  try {
    for (let i = 0; i < size; i++) await add();
  } catch (err) {
    await cluster.close();
    throw err;
  }
  return cluster;
}

/** CPU ms of every gateway process so far (Linux /proc; 0 elsewhere). */
async function gatewaysCpuMs(gateways: Gateway[]): Promise<number> {
  const usages = await Promise.all(gateways.map((g) => processUsage(g.child.pid!)));
  return usages.reduce((sum, usage) => sum + (usage?.cpuMs ?? 0), 0);
}

/** One throughput run: warm-up, then TURNS webhook turns over SESSIONS sessions spread over every gateway's port. */
async function throughput(pg: BenchPostgres, size: number): Promise<Record<string, string | number>> {
  const cluster = await startCluster(pg, size);
  try {
    const ports = cluster.gateways.map((g) => g.port);
    await postLoad(ports, { word: "warm", count: 200, sessions: 50, inFlight: IN_FLIGHT });
    await repliesReached(cluster.fake, "warm", 200, 120_000);
    const load = os.loadavg()[0]!;
    const cpuBefore = await gatewaysCpuMs(cluster.gateways);
    const started = performance.now();
    const posted = await postLoad(ports, { word: "turn", count: TURNS, sessions: SESSIONS, inFlight: IN_FLIGHT });
    const ended = await repliesReached(cluster.fake, "turn", TURNS, 300_000);
    const cpu = (await gatewaysCpuMs(cluster.gateways)) - cpuBefore;
    const problems = replyProblems(cluster.fake, "turn", TURNS);
    for (const gateway of cluster.gateways)
      for (const [msg, { count }] of gateway.problems()) problems.push(`logged ${count} x "${msg}"`);
    const retried = [...posted.retried].map(([status, n]) => `${n} x ${status || "no answer"}`).join(", ");
    return {
      gateways: size,
      "1-min load at start": Number(load.toFixed(1)),
      "all accepted s": Number((posted.acceptedMs / 1000).toFixed(2)),
      "all replied s": Number(((ended - started) / 1000).toFixed(2)),
      "msgs/s": Math.round((TURNS / (ended - started)) * 1000),
      "gateways' CPU ms/turn": Number((cpu / TURNS).toFixed(2)),
      "posts sent again": retried || "none",
      problems: problems.join("; ") || "none",
    };
  } finally {
    await cluster.close();
  }
}

/**
 * Gateways on one PostgreSQL schema: msgs/s of the same webhook load through one gateway and through
 * three (posted over every gateway's port: the owner runs the turns, standbys relay to it).
 */
export async function benchCluster(pg: BenchPostgres, options: { sizes: number[] }): Promise<BenchTable> {
  const rows: Array<Record<string, string | number>> = [];
  for (const size of options.sizes) rows.push(await throughput(pg, size));
  return {
    title: `cluster: ${TURNS.toLocaleString("en-US")} webhook turns over ${SESSIONS} sessions, ${IN_FLIGHT} posts in flight, replies announced to the fake Bot API (real gateway processes, one PostgreSQL schema, offline model)`,
    rows,
    notes: [
      `machine: ${os.cpus().length} cores, shared; msgs/s is from the first post to the fake holding every reply`,
    ],
  };
}
