import os from "node:os";
import { type BenchTable, verdict } from "./harness.js";
import { type InboundCase, percentile, runCase } from "./inbound.js";
import type { BenchPostgres } from "./postgres-server.js";
import type { Backend } from "./store-postgres.js";

const CASES: InboundCase[] = [
  { name: "1 session, one at a time", messages: 300, sessions: 1, burst: false },
  { name: "10,000 sessions, all at once", messages: 10_000, sessions: 10_000, burst: true },
];

/** What one run of a case measured. */
interface Run {
  rate: number;
  median: number;
  cpuUs: number;
  trips: number;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(spec: InboundCase, backend: Backend, pg: BenchPostgres): Promise<Run> {
  const state =
    backend === "postgres"
      ? { backend: "postgres", postgres: { url: pg.url, schema: pg.freshSchema(), poolSize: 10 } }
      : undefined;
  const before = pg.roundTrips();
  const { totalMs, cpuMs, latencies, problems } = await runCase(spec, true, state);
  if (problems > 0) throw new Error(`${spec.name} on ${backend}: ${problems} warnings or errors were logged`);
  return {
    rate: (spec.messages / totalMs) * 1000,
    median: percentile(latencies, 0.5),
    cpuUs: (cpuMs * 1000) / spec.messages,
    // Round trips of the whole case, open and migrations included, per message.
    trips: (pg.roundTrips() - before) / spec.messages,
  };
}

/** A row of medians for one case and the median of the pairs' ratios. */
function row(name: string, local: Run[], postgres: Run[]): Record<string, string | number> {
  const of = (runs: Run[], key: keyof Run, digits: number) => Number(median(runs.map((r) => r[key])).toFixed(digits));
  const ratio = (key: keyof Run) => Number(median(local.map((l, i) => postgres[i]![key] / l[key])).toFixed(2));
  return {
    case: name,
    "msgs/s local": of(local, "rate", 0),
    "msgs/s postgres": of(postgres, "rate", 0),
    "msgs/s pg/local": ratio("rate"),
    "median ms local": of(local, "median", 1),
    "median ms postgres": of(postgres, "median", 1),
    "cpu µs/msg local": of(local, "cpuUs", 0),
    "cpu µs/msg postgres": of(postgres, "cpuUs", 0),
    "pg round trips/msg": of(postgres, "trips", 2),
  };
}

/**
 * The inbound pipeline (gateway core, metrics on) with its state on local files and on PostgreSQL,
 * paired: each pair runs both back to back, alternating which goes first, so a ratio of a pair
 * cancels the load both met. Everything the turn keeps is on the backend measured: with PostgreSQL
 * the transcripts and the workspace are rows too.
 */
export async function benchInboundPostgres(pg: BenchPostgres, pairs = 3): Promise<BenchTable> {
  await runCase({ name: "warm-up", messages: 50, sessions: 5, burst: true }, true);
  const runs = new Map(CASES.map((spec) => [spec.name, { local: [] as Run[], postgres: [] as Run[] }]));
  const loads: number[] = [];
  for (let i = 0; i < pairs; i++) {
    const order: Backend[] = i % 2 === 0 ? ["local", "postgres"] : ["postgres", "local"];
    for (const spec of CASES)
      for (const backend of order) {
        loads.push(os.loadavg()[0]!);
        runs.get(spec.name)![backend].push(await measure(spec, backend, pg));
      }
  }
  const rows = CASES.map((spec) => row(spec.name, runs.get(spec.name)!.local, runs.get(spec.name)!.postgres));
  const [one, tenK] = rows;
  return {
    title: `inbound pipeline, local files vs PostgreSQL (durable, fsync on): ${pairs} alternating pairs (1-minute load ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)} on ${os.cpus().length} cores)`,
    rows,
    notes: [
      verdict("PostgreSQL/local msgs/s at 10,000 sessions", Number(tenK!["msgs/s pg/local"]), 0.5, "x", false),
      verdict("PostgreSQL one session, median reply", Number(one!["median ms postgres"]), 10, "ms", true),
      "pg/local is the median of each pair's ratio; round trips/msg count every query the process sent (open and migrations included)",
    ],
  };
}
