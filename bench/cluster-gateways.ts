// The cluster bench's gateways: real `gateway run` processes on one PostgreSQL schema, the fake Bot API
// they share, and what the bench reads from them (their roles, readiness, CPU and log lines).
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { buildCli, isBuildFresh } from "../bin/cli-build.mjs";
import { type FakeTelegramServer, startFakeTelegramServer } from "../test/fakes/fake-telegram-server.js";
import { hooksConfig } from "./cluster-load.js";
import type { BenchPostgres } from "./postgres-server.js";
import { processUsage } from "./process-usage.js";
import { type Gateway, startGateway, telegramConfig } from "./telegram-e2e.js";

/** A gateway of the cluster and the epoch ms (the log's `time`) at which it logged a message. */
export interface ClusterGateway extends Gateway {
  logged(msg: string): number[];
  /** each step's ms of its start as an owner (the "gateway listening" line's `startupMs`), once it owns the schema */
  startup(): Record<string, number> | undefined;
  /** `cluster.owners: "many"`: its last "holding partitions" line (the core open on that share) */
  holding(): Holding | undefined;
}

/** A "holding partitions" log line: when, how many, which ("0-84, 170", "all" or "none"). */
export interface Holding {
  time: number;
  count: number;
  parts: string;
}

/** Gateways of one schema, each on a home of its own, and what they share. */
export interface Cluster {
  fake: FakeTelegramServer;
  /** the gateways' `cluster.owners` */
  owners: Owners;
  /** the running gateways (a killed one is taken out by whoever kills it) */
  gateways: ClusterGateway[];
  /** starts one more gateway (node `gw-<n>`) on the schema */
  add(): Promise<ClusterGateway>;
  close(): Promise<void>;
}

/** Keeps the epoch ms of every log line of `child` by message (JSON log lines: level, time, ..., msg), and its start's steps. */
function watchLog(child: ChildProcess) {
  const seen = new Map<string, number[]>();
  let startup: Record<string, number> | undefined;
  let holding: Holding | undefined;
  let partial = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split("\n");
    partial = lines.pop()!;
    for (const line of lines) {
      const entry = /^\{"level":\d+,"time":(\d+),.*"msg":"([^"]*)"/.exec(line);
      if (!entry) continue;
      if (entry[2] === "gateway listening") startup = (JSON.parse(line) as { startupMs?: typeof startup }).startupMs;
      if (entry[2] === "holding partitions") holding = JSON.parse(line) as Holding;
      const times = seen.get(entry[2]!) ?? [];
      times.push(Number(entry[1]));
      seen.set(entry[2]!, times);
    }
  });
  return { logged: (msg: string) => seen.get(msg) ?? [], startup: () => startup, holding: () => holding };
}

/** `cluster.owners`: one owner runs every turn (standbys relay), or every gateway runs a share of the partitions. */
export type Owners = "one" | "many";

/**
 * A fake Bot API and `size` gateways on a fresh schema of `pg`, started one after the other (the
 * first owns it, or with `owners` "many" is the global holder), the cluster's other settings at their defaults.
 */
export async function startCluster(pg: BenchPostgres, size: number, owners: Owners): Promise<Cluster> {
  if (!isBuildFresh()) await buildCli();
  const fake = await startFakeTelegramServer();
  const schema = pg.freshSchema();
  const homes: string[] = [];
  const gateways: ClusterGateway[] = [];
  const add = async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), "sb-bench-cluster-"));
    homes.push(home);
    const config = {
      ...telegramConfig(fake.apiRoot),
      state: { backend: "postgres", postgres: { url: pg.url, schema } },
      gateway: { nodeId: `gw-${homes.length}` },
      cluster: { owners },
      hooks: hooksConfig,
    };
    // Watched from its spawn: a first gateway logs its start before it says it listens.
    let log: ReturnType<typeof watchLog> | undefined;
    const gateway = await startGateway(home, config, (child) => {
      log = watchLog(child);
    });
    const member = { ...gateway, ...log! };
    gateways.push(member);
    return member;
  };
  const cluster = {
    fake,
    owners,
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

/** CPU ms of each gateway process so far, in their order (Linux /proc; 0 elsewhere). */
export async function gatewaysCpuMs(gateways: Gateway[]): Promise<number[]> {
  const usages = await Promise.all(gateways.map((g) => processUsage(g.child.pid!)));
  return usages.map((usage) => usage?.cpuMs ?? 0);
}

/** GET `path` of a gateway: status and JSON body (status 0: no answer). */
async function probe(gateway: Gateway, path: string): Promise<{ status: number; body: { role?: string } }> {
  try {
    const res = await fetch(`http://127.0.0.1:${gateway.port}${path}`, { signal: AbortSignal.timeout(2_000) });
    return { status: res.status, body: (await res.json()) as { role?: string } };
  } catch {
    return { status: 0, body: {} };
  }
}

/** The gateway that owns the schema: the one whose `/healthz` does not say "standby". */
export async function ownerOf<T extends Gateway>(gateways: T[]): Promise<T> {
  const roles = await Promise.all(gateways.map((g) => probe(g, "/healthz")));
  const owners = gateways.filter((_, i) => roles[i]!.status === 200 && roles[i]!.body.role !== "standby");
  if (owners.length !== 1) throw new Error(`expected one owner, found ${owners.length}: ${JSON.stringify(roles)}`);
  return owners[0]!;
}

/** Resolves once every one of `standbys` answers `/readyz` 200 (it can relay to the owner), checked every 50 ms. */
export async function standbysReady(standbys: Gateway[], timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (const standby of standbys)
    while ((await probe(standby, "/readyz")).status !== 200) {
      if (performance.now() > deadline) throw new Error(`the standby on port ${standby.port} is not ready`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
}
