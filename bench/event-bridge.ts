// `npm run bench -- events`: session events across gateways (src/cluster/event-bridge.ts,
// docs/scale-out.md "Events across gateways"): two hubs bridged on one schema, as two gateways are.
// Turns emit what a client's turn emits (agent queued and running together, the reply's delivery,
// agent ok and chat final together); a burst emits 10,000 events 100 a task; a long reply is 50 KB.
import os from "node:os";
import pg from "pg";
import { bridgeEvents } from "../src/cluster/event-bridge.js";
import { createEventHub, type EventHub } from "../src/gateway/event-hub.js";
import type { Logger } from "../src/logger.js";
import type { BenchTable } from "./harness.js";
import type { BenchPostgres } from "./postgres-server.js";

const silent: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const SESSION = "agent:main:main";
const nextTask = () => new Promise((resolve) => setImmediate(resolve));

/** Two gateways' hubs bridged on `schema`; `arrived(text)` settles when B's hub emits an event of that text. */
async function bridgedPair(pgServer: BenchPostgres) {
  const schema = pgServer.freshSchema();
  const pools = [0, 1].map(() => new pg.Pool({ connectionString: pgServer.url, max: 2 }));
  const hubs = [createEventHub(), createEventHub()] as const;
  const bridges = hubs.map((hub, i) =>
    bridgeEvents({ pool: pools[i]!, schema, nodeId: `gw-${i}`, hub, logger: silent }),
  );
  await Promise.all(bridges.map((b) => b.listening));
  const waiting = new Map<string, () => void>();
  hubs[1].subscribe((frame) => waiting.get((frame.payload as { text: string }).text)?.());
  const arrived = (text: string) => new Promise<void>((resolve) => waiting.set(text, resolve));
  const close = async () => {
    for (const bridge of bridges) await bridge.stop();
    for (const pool of pools) await pool.end();
  };
  return { a: hubs[0], arrived, close };
}

/** One client turn's events on `hub`, in the groups a gateway emits them (docs: 5 events, 3 groups). */
async function turnEvents(hub: EventHub, n: number, reply: string): Promise<void> {
  const run = { runId: `run-${n}`, sessionKey: SESSION };
  hub.emit("agent", { ...run, status: "queued" });
  hub.emit("agent", { ...run, status: "running" });
  await nextTask();
  hub.emit("chat.delivery", { sessionKey: SESSION, text: reply, messageId: `m-${n}`, kind: "reply" });
  await nextTask();
  hub.emit("agent", { ...run, status: "ok" });
  hub.emit("chat", { ...run, state: "final", text: `final-${n}` });
}

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
const p95 = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length * 0.95)]!;

/** `turns` turns one after the other, each waited for on B: statements per turn and the final's delay. */
async function turns(pgServer: BenchPostgres, label: string, turns: number, reply: string) {
  const pair = await bridgedPair(pgServer);
  const delays: number[] = [];
  const trips = pgServer.roundTrips();
  const cpu = process.cpuUsage();
  for (let n = 0; n < turns; n++) {
    const arrived = pair.arrived(`final-${n}`);
    const started = performance.now();
    await turnEvents(pair.a, n, reply);
    await arrived;
    delays.push(performance.now() - started);
  }
  const used = process.cpuUsage(cpu);
  const row = {
    case: label,
    "NOTIFY statements/turn": Number(((pgServer.roundTrips() - trips) / turns).toFixed(2)),
    "turn's events on B, median ms": Number(median(delays).toFixed(2)),
    "p95 ms": Number(p95(delays).toFixed(2)),
    "both ends' CPU µs/event": Math.round((used.user + used.system) / (turns * 5)),
  };
  await pair.close();
  return row;
}

/** 10,000 events emitted 100 a task: how long until B has them all, and the statements it took. */
async function burst(pgServer: BenchPostgres) {
  const pair = await bridgedPair(pgServer);
  const total = 10_000;
  const body = "x".repeat(300);
  const trips = pgServer.roundTrips();
  const cpu = process.cpuUsage();
  const last = pair.arrived(`${total - 1}`);
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    pair.a.emit("chat.delivery", { sessionKey: SESSION, text: String(i), body });
    if (i % 100 === 99) await nextTask();
  }
  await last;
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  await pair.close();
  return {
    case: "burst: 10,000 events of 300 bytes, 100 a task",
    "NOTIFY statements": pgServer.roundTrips() - trips,
    "all on B ms": Math.round(ms),
    "events/s": Math.round((total / ms) * 1000),
    "both ends' CPU µs/event": Math.round((used.user + used.system) / total),
  };
}

/** The event bridge's costs on the bench's PostgreSQL. */
export async function benchEventBridge(pgServer: BenchPostgres): Promise<BenchTable> {
  const load = os.loadavg()[0]!.toFixed(1);
  const rows: Array<Record<string, string | number>> = [
    await turns(pgServer, "200 turns, 100-byte reply", 200, "r".repeat(100)),
    await turns(pgServer, "50 turns, 50 KB reply (7 parts)", 50, "é".repeat(25_000)),
    await burst(pgServer),
  ];
  return {
    title: "session events across gateways (two hubs bridged on one schema)",
    rows,
    notes: [`1-min load at start: ${load} (${os.cpus().length} cores)`],
  };
}
