import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Update } from "grammy/types";
import { buildCli, isBuildFresh } from "../bin/cli-build.mjs";
import { type FakeTelegramServer, TEST_BOT, startFakeTelegramServer } from "../test/fakes/fake-telegram-server.js";
import { type GatewayReadings, gatewayReadings, readingsBetween } from "./gateway-readings.js";
import { type BenchTable, verdict } from "./harness.js";
import { type ProcessUsage, processUsage } from "./process-usage.js";

const MESSAGES = 10_000;
const CHATS = 1_000;
const BIN = path.resolve(import.meta.dirname, "../bin/switchboard");

/** A gateway started the way a user starts it (`bin/switchboard gateway run`), and its warnings. */
export interface Gateway {
  child: ChildProcess;
  /** the port it listens on (from its "listening on" line) */
  port: number;
  /** log lines at warn or above so far, by message */
  problems(): Map<string, { count: number; first: string }>;
  stop(): Promise<void>;
}

/** A config whose Telegram is the fake; each sender gets its own DM session (the default `dmScope: "main"` would put all chats in one). */
export const telegramConfig = (apiRoot: string) => ({
  session: { dmScope: "per-channel-peer" },
  channels: { telegram: { botToken: TEST_BOT.token, apiRoot, dmPolicy: "open" } },
});

/**
 * Starts the real CLI on a temp home with `config`, resolving once it listens; `spawned` sees the
 * child first (its every log line). Extra node flags for the gateway (for a profile:
 * `--cpu-prof --cpu-prof-dir=/tmp/prof`) come from SB_BENCH_NODE_ARGS.
 */
export async function startGateway(
  home: string,
  config: object,
  spawned?: (child: ChildProcess) => void,
): Promise<Gateway> {
  await writeFile(path.join(home, "switchboard.json5"), JSON.stringify(config));
  const nodeArgs = (process.env.SB_BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, BIN, "gateway", "run", "--port", "0"], {
    env: { ...process.env, SWITCHBOARD_HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  spawned?.(child);
  const problems = new Map<string, { count: number; first: string }>();
  let stderr = "";
  let partial = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
    const lines = (partial + chunk.toString()).split("\n");
    partial = lines.pop()!;
    for (const line of lines) {
      const msg = /^\{"level":(?:40|50|60),.*"msg":"([^"]*)"/.exec(line)?.[1];
      if (msg === undefined) continue;
      const seen = problems.get(msg);
      if (seen) seen.count++;
      else problems.set(msg, { count: 1, first: line.slice(0, 600) });
    }
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      const listening = /gateway listening on \w+:\/\/[^\s]*:(\d+)/.exec(chunk.toString());
      if (listening) resolve(Number(listening[1]));
    });
    void exited.then(() => reject(new Error(`the gateway exited early: ${stderr}`)));
  });
  return {
    child,
    port,
    problems: () => problems,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Message `i` of a burst from `chats` chats: from chat `firstChat + i % chats`, its message number `i / chats + 1`. */
export function dm(i: number, chats: number, firstChat: number, word: string): Omit<Update, "update_id"> {
  const id = firstChat + (i % chats);
  return {
    message: {
      message_id: Math.floor(i / chats) + 1,
      date: 1767225600,
      chat: { id, type: "private", first_name: `User ${id}` },
      from: { id, is_bot: false, first_name: `User ${id}` },
      text: `${word} ${i}`,
    },
  } as unknown as Omit<Update, "update_id">;
}

/** Resolves with the time the fake had accepted `count` replies (checked every 10 ms). */
async function repliesReached(fake: FakeTelegramServer, count: number, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  while (fake.sent.length < count) {
    if (performance.now() > deadline) throw new Error(`only ${fake.sent.length} of ${count} replies in time`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return performance.now();
}

/**
 * Notes when a getUpdates confirms (by its offset) every update pushed so far: checked every 10 ms
 * from where it looked last, so a long call list costs the fake nothing (`fake.flush` filters every call on every call).
 */
function watchStored(fake: FakeTelegramServer): { at(): number } {
  let seen = fake.calls.length;
  let at = Number.NaN;
  const pushed = 300 + MESSAGES;
  const look = () => {
    for (; seen < fake.calls.length && Number.isNaN(at); seen++) {
      const call = fake.calls[seen]!;
      if (call.method === "getUpdates" && Number(call.body.offset ?? 0) > pushed) at = performance.now();
    }
    if (!Number.isNaN(at)) clearInterval(timer);
  };
  const timer = setInterval(look, 10);
  return {
    at() {
      look();
      clearInterval(timer);
      return at;
    },
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * The median time from one getUpdates to the next while the burst was taken in (the fake's arrival
 * times): one polled batch of up to 100 updates stored and confirmed, which paces the burst when
 * the main thread has time to spare (sixth pass in docs/performance.md).
 */
function pollCycleMs(fake: FakeTelegramServer, fromEpochMs: number): number {
  const pushed = 300 + MESSAGES;
  const polls = fake.calls.filter(
    (c) => c.method === "getUpdates" && c.at >= fromEpochMs && Number(c.body.offset ?? 0) <= pushed,
  );
  const gaps = polls.slice(1).map((c, i) => c.at - polls[i]!.at);
  return gaps.length ? median(gaps) : Number.NaN;
}

/** What went wrong with the replies: missing, repeated, or out of order within a chat. */
function replyProblems(fake: FakeTelegramServer): string[] {
  const seen = new Map<string, number>();
  const replies = fake.sent.filter((sent) => sent.text.startsWith("Echo: hello "));
  for (const sent of replies) seen.set(sent.text, (seen.get(sent.text) ?? 0) + 1);
  const problems: string[] = [];
  const missing = Array.from({ length: MESSAGES }, (_, i) => `Echo: hello ${i}`).filter((text) => !seen.has(text));
  if (missing.length) problems.push(`${missing.length} messages unanswered (first: ${missing[0]})`);
  const twice = [...seen].filter(([, n]) => n > 1).length;
  if (twice) problems.push(`${twice} messages answered more than once`);
  const lastOf = new Map<string, number>();
  let disordered = 0;
  for (const sent of replies) {
    const n = Number(/hello (\d+)$/.exec(sent.text)?.[1]);
    if (n < (lastOf.get(sent.chatId) ?? -1)) disordered++;
    lastOf.set(sent.chatId, n);
  }
  if (disordered) problems.push(`${disordered} replies came before an earlier message's reply in their chat`);
  return problems;
}

/** What one burst measured. */
interface Burst {
  ms: number;
  /** from queueing to the poll that confirmed the last update (every update stored by then) */
  storedMs: number;
  before: ProcessUsage | undefined;
  after: ProcessUsage | undefined;
  /** CPU of this (the bench's) process during the burst: the fake Bot API, and the 10 ms reply check */
  fakeCpuMs: number;
  /** 1-minute load average when the burst started and when it ended */
  load: [number, number];
  /** median ms from one getUpdates to the next while the burst was taken in */
  pollCycleMs: number;
  /** what the gateway's `/metrics` counted during the burst: journal batches, collections */
  counted: GatewayReadings;
  problems: string[];
}

/**
 * One burst: the gateway up and polling, warmed up by 300 DMs from 100 other chats (code loaded and
 * compiled on first use is not what is measured), then every update queued at once, timed to the last reply.
 */
async function runBurst(): Promise<Burst> {
  const fake = await startFakeTelegramServer();
  const home = await mkdtemp(path.join(os.tmpdir(), "sb-bench-e2e-"));
  const gateway = await startGateway(home, telegramConfig(fake.apiRoot));
  try {
    for (let i = 0; i < 300; i++) fake.push(dm(i, 100, 9_000, "warm-up"));
    await repliesReached(fake, 300, 120_000);
    const http = `http://127.0.0.1:${gateway.port}`;
    const countedBefore = await gatewayReadings(http);
    const before = await processUsage(gateway.child.pid!);
    const loadBefore = os.loadavg()[0]!;
    const ownCpu = process.cpuUsage();
    const started = performance.now();
    const startedEpoch = Date.now();
    for (let i = 0; i < MESSAGES; i++) fake.push(dm(i, CHATS, 1_000, "hello"));
    const stored = watchStored(fake);
    const ended = await repliesReached(fake, 300 + MESSAGES, 600_000);
    const storedAt = stored.at();
    const own = process.cpuUsage(ownCpu);
    const after = await processUsage(gateway.child.pid!);
    const load: [number, number] = [loadBefore, os.loadavg()[0]!];
    const counted = readingsBetween(countedBefore, await gatewayReadings(http));
    await gateway.stop();
    const problems = replyProblems(fake);
    for (const [msg, { count, first }] of gateway.problems())
      problems.push(`logged ${count} x "${msg}" (first: ${first})`);
    return {
      ms: ended - started,
      storedMs: storedAt - started,
      before,
      after,
      fakeCpuMs: (own.user + own.system) / 1000,
      load,
      pollCycleMs: pollCycleMs(fake, startedEpoch),
      counted,
      problems,
    };
  } finally {
    await gateway.stop();
    await fake.close();
    await rm(home, { recursive: true, force: true });
  }
}

/** CPU ms per message between two readings of the gateway, or "n/a" off Linux. */
function perMessage(burst: Burst, field: "cpuMs" | "mainThreadCpuMs"): number | "n/a" {
  const { before, after } = burst;
  return before && after ? Number(((after[field] - before[field]) / MESSAGES).toFixed(2)) : "n/a";
}

/** Percent of the burst's wall time the main thread ran, and waited ready to run for a core (the rest it was idle). */
function mainThreadShares(burst: Burst): string {
  const { before, after } = burst;
  if (!before || !after) return "n/a";
  const share = (ms: number) => (Number.isNaN(ms) ? "n/a" : Math.round((ms / burst.ms) * 100));
  return `${share(after.mainThreadCpuMs - before.mainThreadCpuMs)} / ${share(after.mainThreadWaitMs - before.mainThreadWaitMs)}`;
}

/** One table row per burst. */
function burstRow(burst: Burst, name: string): Record<string, string | number> {
  const { counted } = burst;
  return {
    run: name,
    "load at start/end": burst.load.map((n) => n.toFixed(1)).join(" / "),
    "all stored s": Number((burst.storedMs / 1000).toFixed(2)),
    "total s": Number((burst.ms / 1000).toFixed(2)),
    "msgs/s": Math.round((MESSAGES / burst.ms) * 1000),
    "gateway CPU ms/msg": perMessage(burst, "cpuMs"),
    "main thread ms/msg": perMessage(burst, "mainThreadCpuMs"),
    "fake API CPU ms/msg": Number((burst.fakeCpuMs / MESSAGES).toFixed(2)),
    "main busy / wait %": mainThreadShares(burst),
    "poll cycle ms": Math.round(burst.pollCycleMs),
    "gateway peak RSS MiB": burst.after ? Math.round(burst.after.peakRssMiB) : "n/a",
    "journal syncs": counted.syncs,
    "mean sync ms": Number(((counted.syncSeconds / counted.syncs) * 1000).toFixed(1)),
    "scavenges / mark-compacts": `${counted.scavenges} / ${counted.markCompacts}`,
    "GC pause ms/msg": Number(((counted.gcSeconds * 1000) / MESSAGES).toFixed(2)),
  };
}

/**
 * Telegram end to end: a fake Bot API on 127.0.0.1 holds 10,000 DMs from 1,000 chats; the real
 * gateway process (`bin/switchboard gateway run`) polls them with the real grammy adapter, stores
 * each before the offset moves, runs the offline model, and sends every reply back through the Bot
 * API. Timed from queueing the updates to the last reply at the fake; CPU and peak RSS are the
 * gateway process's own (Linux `/proc`), the fake's CPU is counted apart. `runs` bursts, each with
 * a fresh gateway; the verdicts read their medians.
 */
export async function benchTelegramEndToEnd(runs = 3): Promise<BenchTable> {
  // The gateway a user starts runs from dist/ (built by npm ci); from edited sources it would run
  // through tsx, with about 70 MiB more resident (measured: 386-402 against 308-335 MiB peak).
  if (!isBuildFresh()) await buildCli();
  const bursts: Burst[] = [];
  for (let i = 0; i < runs; i++) bursts.push(await runBurst());
  const rate = median(bursts.map((b) => Math.round((MESSAGES / b.ms) * 1000)));
  const peaks = bursts.flatMap((b) => (b.after ? [Math.round(b.after.peakRssMiB)] : []));
  const notes = bursts.flatMap((b, i) => b.problems.map((p) => `FAIL run ${i + 1}: ${p}`));
  notes.push(verdict(`end-to-end msgs/s, median of ${runs}`, rate, 1_000, "msgs/s", false));
  if (peaks.length) notes.push(verdict("gateway peak RSS, highest run", Math.max(...peaks), 400, "MiB", true));
  if (process.env.SB_BENCH_NODE_ARGS)
    notes.push(`the gateway ran with SB_BENCH_NODE_ARGS: ${process.env.SB_BENCH_NODE_ARGS}`);
  return {
    title: `Telegram end to end: ${MESSAGES.toLocaleString("en-US")} DMs from ${CHATS.toLocaleString("en-US")} chats queued at once (fake Bot API on 127.0.0.1, real grammy polling, real gateway process, offline model)`,
    rows: bursts.map((b, i) => burstRow(b, `${i + 1} of ${runs}`)),
    notes,
  };
}
