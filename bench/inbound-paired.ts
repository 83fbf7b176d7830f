import { spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import type { BenchTable } from "./harness.js";

const RUN = path.join(import.meta.dirname, "run.ts");
type Mode = "off" | "on";
type Row = Record<string, string | number>;

/** One `inbound` table run in its own process with the metrics `mode`; its rows by case name. */
function runChild(mode: Mode): Promise<Map<string, Row>> {
  // A process per run: prom-client's default process metrics (a GC observer, an event-loop monitor)
  // are never stopped once started, so an "off" run in a process that once ran "on" would carry them.
  const child = spawn(process.execPath, ["--import", "tsx", RUN, "inbound", "--json", `--metrics=${mode}`], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      if (code !== 0) return reject(new Error(`bench inbound --metrics=${mode} exited ${code}`));
      const table = JSON.parse(out.trim().split("\n").at(-1)!) as { rows: Row[] };
      resolve(new Map(table.rows.map((row) => [String(row.case), row])));
    });
  });
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** What one pair of runs (off, on) measured for one case. */
interface Pair {
  off: Row;
  on: Row;
}

/** One table row for a case: medians off and on, and the median of the per-pair ratios on/off. */
function summarize(name: string, pairs: Pair[]): Row {
  const of = (mode: Mode, column: string) => pairs.map((pair) => Number(pair[mode][column]));
  const ratios = (column: string) => pairs.map((pair) => Number(pair.on[column]) / Number(pair.off[column]));
  return {
    case: name,
    "msgs/s off": median(of("off", "msgs/s")),
    "msgs/s on": median(of("on", "msgs/s")),
    "msgs/s on/off": Number(median(ratios("msgs/s")).toFixed(3)),
    "on slower in": `${pairs.filter((pair) => Number(pair.on["msgs/s"]) < Number(pair.off["msgs/s"])).length}/${pairs.length}`,
    "latency median ms off": median(of("off", "latency median ms")),
    "latency median ms on": median(of("on", "latency median ms")),
    "latency on/off": Number(median(ratios("latency median ms")).toFixed(3)),
    "cpu µs/msg off": median(of("off", "cpu µs/msg")),
    "cpu µs/msg on": median(of("on", "cpu µs/msg")),
    "cpu on/off": Number(median(ratios("cpu µs/msg")).toFixed(3)),
  };
}

/**
 * The metrics' cost end to end: `pairs` pairs of `bench inbound` runs, one without a metrics
 * registry and one with it (as every gateway runs), each in a fresh process, back to back so both
 * halves of a pair meet the same machine load, alternating which half goes first. Ratios of a pair
 * cancel the load both halves shared; their median is the figure to quote on a shared machine.
 */
export async function benchInboundPaired(pairs: number): Promise<BenchTable> {
  if (!Number.isInteger(pairs) || pairs < 1) throw new Error(`--pairs=${pairs}: give a whole number of at least 1`);
  const byCase = new Map<string, Pair[]>();
  const loads: number[] = [];
  for (let i = 0; i < pairs; i++) {
    const order: Mode[] = i % 2 === 0 ? ["off", "on"] : ["on", "off"];
    const runs: Partial<Record<Mode, Map<string, Row>>> = {};
    for (const mode of order) {
      loads.push(os.loadavg()[0]!);
      runs[mode] = await runChild(mode);
    }
    const said: string[] = [];
    for (const [name, off] of runs.off!) {
      const on = runs.on!.get(name);
      if (!on) continue;
      byCase.set(name, [...(byCase.get(name) ?? []), { off, on }]);
      said.push(
        `${name}: ${off["msgs/s"]} off, ${on["msgs/s"]} on msgs/s; median ${off["latency median ms"]} / ${on["latency median ms"]} ms; cpu ${off["cpu µs/msg"]} / ${on["cpu µs/msg"]} µs/msg`,
      );
    }
    // A long series on a loaded machine: each pair is said as it ends, on stderr.
    console.error(
      `pair ${i + 1}/${pairs} (${order.join(" then ")}, load ${os.loadavg()[0]!.toFixed(1)}): ${said.join("; ")}`,
    );
  }
  const rows = [...byCase].map(([name, list]) => summarize(name, list));
  const min = Math.min(...loads).toFixed(1);
  const max = Math.max(...loads).toFixed(1);
  return {
    title: `inbound pipeline, metrics off vs on: ${pairs} alternating pairs, a fresh process per run (1-minute load ${min} to ${max} on ${os.cpus().length} cores)`,
    rows,
    notes: [
      "on/off is the median of each pair's ratio: below 1 for msgs/s, or above 1 for latency and CPU, is what the metrics cost",
      "cpu µs/msg is the process's CPU time (every thread) over the case per message: on a loaded machine it moves far less than wall time",
    ],
  };
}
