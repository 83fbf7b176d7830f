import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type BenchTable, verdict } from "./harness.js";
import { startGateway } from "./telegram-e2e.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const BIN = path.join(ROOT, "bin/switchboard");
const GOAL_MS = 300;

// The child reports its own CPU time (all threads) on fd 3 as it exits: on a loaded machine wall time
// mostly measures the wait for a core, CPU time what the start costs.
const REPORT_CPU = `data:text/javascript,import{writeSync}from"node:fs";process.on("exit",()=>{const u=process.cpuUsage();writeSync(3,String((u.user+u.system)/1e3))})`;

/** Wall and CPU ms of one whole process, from spawn to exit (its start-up included). */
function timeProcess(args: string[], env: NodeJS.ProcessEnv): Promise<{ wall: number; cpu: number }> {
  const start = process.hrtime.bigint();
  const child = spawn(process.execPath, ["--import", REPORT_CPU, ...args], {
    env,
    stdio: ["ignore", "ignore", "ignore", "pipe"],
  });
  let cpu = "";
  child.stdio[3]!.on("data", (chunk: Buffer) => (cpu += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) =>
      code === 0
        ? resolve({ wall: Number(process.hrtime.bigint() - start) / 1e6, cpu: Number(cpu) })
        : reject(new Error(`${args.join(" ")} exited ${code}`)),
    );
  });
}

const middle = (values: number[]) => Math.round(values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!);

/** Median wall and CPU ms of `runs` processes, after one warm-up (the file system cache). */
async function median(args: string[], env: NodeJS.ProcessEnv, runs: number) {
  await timeProcess(args, env);
  const samples: Array<{ wall: number; cpu: number }> = [];
  for (let i = 0; i < runs; i++) samples.push(await timeProcess(args, env));
  return { "median ms": middle(samples.map((s) => s.wall)), "median cpu ms": middle(samples.map((s) => s.cpu)), runs };
}

/**
 * This checkout against `baseline` (another checkout, built by its own npm ci), run for run in turn
 * (A B A B ...): on a shared machine the speed drifts, and the ratio of each pair holds where a
 * median taken minutes apart does not.
 */
async function paired(baseline: string, command: string, env: NodeJS.ProcessEnv, runs: number) {
  const ours = [BIN, command];
  const theirs = [path.join(baseline, "bin/switchboard"), command];
  await timeProcess(ours, env);
  await timeProcess(theirs, env);
  const pairs: Array<{ a: { wall: number; cpu: number }; b: { wall: number; cpu: number } }> = [];
  for (let i = 0; i < runs; i++) pairs.push({ a: await timeProcess(ours, env), b: await timeProcess(theirs, env) });
  const ratio = (values: number[]) =>
    Number((values.sort((x, y) => x - y)[Math.floor(values.length / 2)] ?? 0).toFixed(2));
  return {
    command: `switchboard ${command}: this checkout / ${baseline}`,
    "median ms": `${middle(pairs.map((p) => p.a.wall))} / ${middle(pairs.map((p) => p.b.wall))}`,
    "median cpu ms": `${middle(pairs.map((p) => p.a.cpu))} / ${middle(pairs.map((p) => p.b.cpu))}`,
    "cpu ratio (median of pairs)": ratio(pairs.map((p) => p.a.cpu / p.b.cpu)),
    "wall ratio (median of pairs)": ratio(pairs.map((p) => p.a.wall / p.b.wall)),
    runs,
  };
}

/** The hooks token of the bench's gateway (hooks on: a small config that is not all defaults). */
const HOOKS = { hooks: { enabled: true, token: "bench-hook-token-0123456789" } };

/** The rows of `commands` in one home, each with its verdict against the goal; paired with `baseline` when given. */
async function commandRows(commands: string[], env: NodeJS.ProcessEnv, label: string, runs: number) {
  const rows: Array<Record<string, string | number>> = [];
  const notes: string[] = [];
  for (const command of commands) {
    const row = await median([BIN, command], env, runs);
    rows.push({ command: `switchboard ${command}${label}`, ...row });
    notes.push(verdict(`switchboard ${command}${label}, median of ${runs}`, row["median ms"], GOAL_MS, "ms", true));
  }
  const baseline = process.env.SB_BENCH_CLI_BASELINE;
  if (baseline)
    for (const command of commands) {
      const row = await paired(baseline, command, env, runs);
      rows.push({ ...row, command: `${row.command}${label}` });
    }
  return { rows, notes };
}

/** `status` and `sessions` against a gateway the bench starts in its own home (hooks on, a free port). */
async function withGatewayRows(runs: number) {
  const home = await mkdtemp(path.join(os.tmpdir(), "sb-bench-cli-gw-"));
  const gateway = await startGateway(home, HOOKS);
  try {
    const env = { ...process.env, SWITCHBOARD_HOME: home };
    // Timed only once `status` is answered by the gateway: the files-only path would time something else.
    const probe = spawnSync(process.execPath, [BIN, "status", "--json"], { env, encoding: "utf8" });
    if (JSON.parse(probe.stdout).source !== "gateway")
      throw new Error(`status did not reach the gateway: ${probe.stdout}`);
    return await commandRows(["status", "sessions"], env, " (gateway running)", runs);
  } finally {
    await gateway.stop();
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * `switchboard --help`, `status` and `sessions` as a user runs them: a whole process each, built by npm ci;
 * in a home without a gateway, then `status` and `sessions` with one running (they ask it over the WebSocket).
 * `SB_BENCH_CLI_BASELINE=<another checkout>` adds each row paired against that checkout's CLI.
 */
export async function benchCli(): Promise<BenchTable> {
  const built = spawnSync(process.execPath, [path.join(ROOT, "bin/cli-build.mjs")], { stdio: "inherit" });
  if (built.status !== 0) throw new Error("bin/cli-build.mjs failed");
  const home = await mkdtemp(path.join(os.tmpdir(), "sb-bench-cli-"));
  const env = { ...process.env, SWITCHBOARD_HOME: home };
  const runs = 15;
  try {
    const floor = { command: "node -e 0 (the floor: Node's own start)", ...(await median(["-e", "0"], env, runs)) };
    const alone = await commandRows(["--help", "status", "sessions"], env, "", runs);
    const live = await withGatewayRows(runs);
    // CPU as a multiple of Node's own start: steadier than wall time on a shared machine.
    const overFloor = (row: Record<string, string | number>) =>
      typeof row["median cpu ms"] === "number"
        ? { ...row, "cpu / floor": Number((row["median cpu ms"] / floor["median cpu ms"]).toFixed(2)) }
        : row;
    const rows = [floor, ...alone.rows, ...live.rows].map(overFloor);
    const notes = [...alone.notes, ...live.notes];
    const sources = ["--import", "tsx", path.join(ROOT, "bin/entry.ts"), "--help"];
    rows.push({
      command: "switchboard --help from the sources (tsx: no build, or an edited one)",
      ...(await median(sources, env, 3)),
    });
    notes.push(
      "before (issue #30, every start compiled the sources with tsx): 700-2,600 ms for --help, status, sessions",
    );
    const load = os.loadavg().map((n) => n.toFixed(1));
    notes.push(
      `load average ${load.join(" ")}: on a busy machine wall time is mostly the wait for a core (the floor too); CPU time is what a start costs`,
    );
    return { title: "cli (whole process, spawn to exit)", rows, notes };
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
