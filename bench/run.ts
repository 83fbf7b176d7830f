// `npm run bench` runs every table; `npm run bench -- <table> [...]` runs some
// (routing, store, transcripts, listing, inbound, cli, e2e, metrics, store-pg, inbound-pg, standby-reads, share, cluster, events); `--json` prints one JSON object per table.
// `cluster [--gateways=1,3] [--owners=one,many] [--failovers=N]`: msgs/s through 1 and 3 gateways on one schema, each size
// in each `cluster.owners` mode in turn, then on the 3 gateways of each mode N SIGKILLs (default 3): of the owner ("one");
// of a partition owner, then of the global holder ("many").
// `e2e --runs=N` runs the end-to-end burst N times (default 3), each with a fresh gateway.
// `inbound --metrics=off` runs the inbound table without a metrics registry (default on, as a gateway runs);
// `inbound --metrics=paired [--pairs=N]` runs it off and on in alternating child processes and compares them.
import os from "node:os";
import { benchCli } from "./cli.js";
import { benchCluster } from "./cluster.js";
import type { Owners } from "./cluster-gateways.js";
import { benchEventBridge } from "./event-bridge.js";
import type { BenchTable } from "./harness.js";
import { benchInbound } from "./inbound.js";
import { benchInboundPaired } from "./inbound-paired.js";
import { benchInboundPostgres } from "./inbound-postgres.js";
import { benchMetrics } from "./metrics.js";
import { benchPartitionShare } from "./partition-share.js";
import { type BenchPostgres, postgresMissing, startBenchPostgres } from "./postgres-server.js";
import { benchRouting } from "./routing.js";
import { benchSessionListing } from "./session-listing.js";
import { benchSessionStore } from "./session-store.js";
import { benchStandbyReads } from "./standby-reads.js";
import { benchStorePostgres } from "./store-postgres.js";
import { benchTelegramEndToEnd } from "./telegram-e2e.js";
import { benchTranscripts } from "./transcripts.js";

const args = process.argv.slice(2);
const json = args.includes("--json");
const flag = (name: string) => args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const metricsMode = flag("metrics") ?? "on";
if (!["on", "off", "paired"].includes(metricsMode)) {
  console.error(`--metrics=${metricsMode}: choose on, off or paired`);
  process.exit(2);
}

// The PostgreSQL tables share one server, started by the first of them and stopped at the end.
let postgres: Promise<BenchPostgres> | undefined;
const onPostgres = (title: string, bench: (pg: BenchPostgres) => Promise<BenchTable>) => async () => {
  const missing = postgresMissing();
  if (missing) return { title, rows: [], notes: [`skipped: ${missing}`] };
  postgres ??= startBenchPostgres();
  return bench(await postgres);
};

const tables: Record<string, () => BenchTable | Promise<BenchTable>> = {
  routing: benchRouting,
  store: benchSessionStore,
  transcripts: benchTranscripts,
  listing: benchSessionListing,
  inbound: () =>
    metricsMode === "paired"
      ? benchInboundPaired(Number(flag("pairs") ?? 5))
      : benchInbound({ metrics: metricsMode === "on" }),
  cli: benchCli,
  e2e: () => benchTelegramEndToEnd(Number(flag("runs") ?? 3)),
  metrics: benchMetrics,
  "store-pg": onPostgres("session store, local vs PostgreSQL", (pg) =>
    benchStorePostgres(pg, Number(flag("pairs") ?? 3)),
  ),
  "inbound-pg": onPostgres("inbound, local vs PostgreSQL", (pg) =>
    benchInboundPostgres(pg, Number(flag("pairs") ?? 3)),
  ),
  "standby-reads": onPostgres("a standby's reads", benchStandbyReads),
  share: onPostgres("partition share", benchPartitionShare),
  events: onPostgres("session events across gateways", benchEventBridge),
  cluster: onPostgres("cluster: gateways on one PostgreSQL schema", (pg) =>
    benchCluster(pg, {
      sizes: (flag("gateways") ?? "1,3").split(",").map(Number),
      owners: (flag("owners") ?? "one,many").split(",") as Owners[],
      failovers: Number(flag("failovers") ?? 3),
    }),
  ),
};

const names = args.filter((arg) => !arg.startsWith("--"));
const unknown = names.filter((name) => !(name in tables));
if (unknown.length) {
  console.error(`unknown table ${unknown.join(", ")}; choose from ${Object.keys(tables).join(", ")}`);
  process.exit(2);
}
const machine = {
  node: process.version,
  cpus: `${os.cpus().length} x ${os.cpus()[0]?.model ?? "cpu"}`,
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  loadAverage: os.loadavg().map((n) => Number(n.toFixed(2))),
};
if (!json)
  console.log(`node ${machine.node}, ${machine.cpus}, ${machine.memoryGiB} GiB, load ${machine.loadAverage.join(" ")}`);
for (const name of names.length ? names : Object.keys(tables)) {
  const table = await tables[name]!();
  if (json) console.log(JSON.stringify({ table: name, machine, ...table }));
  else {
    console.log(`\n${table.title}`);
    console.table(table.rows);
    for (const note of table.notes ?? []) console.log(note);
  }
}
if (postgres) await (await postgres).stop();
