import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Update } from "grammy/types";
import { type FakeTelegramServer, TEST_BOT, startFakeTelegramServer } from "../test/fakes/fake-telegram-server.js";
import { type BenchTable, verdict } from "./harness.js";
import { type ProcessUsage, processUsage } from "./process-usage.js";

const MESSAGES = 10_000;
const CHATS = 1_000;
const BIN = path.resolve(import.meta.dirname, "../bin/switchboard");

/** A gateway started the way a user starts it (`bin/switchboard gateway run`), and its warnings. */
interface Gateway {
  child: ChildProcess;
  /** log lines at warn or above so far, by message */
  problems(): Map<string, number>;
  stop(): Promise<void>;
}

/**
 * Starts the real CLI on a temp home whose config points Telegram at the fake. Each sender gets its
 * own DM session (the default `dmScope: "main"` would put all 1,000 chats in one). Extra node flags
 * for the gateway (for a profile: `--cpu-prof --cpu-prof-dir=/tmp/prof`) come from SB_BENCH_NODE_ARGS.
 */
async function startGateway(home: string, apiRoot: string): Promise<Gateway> {
  const config = {
    session: { dmScope: "per-channel-peer" },
    channels: { telegram: { botToken: TEST_BOT.token, apiRoot, dmPolicy: "open" } },
  };
  await writeFile(path.join(home, "switchboard.json5"), JSON.stringify(config));
  const nodeArgs = (process.env.SB_BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, BIN, "gateway", "run", "--port", "0"], {
    env: { ...process.env, SWITCHBOARD_HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const problems = new Map<string, number>();
  let stderr = "";
  let partial = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
    const lines = (partial + chunk.toString()).split("\n");
    partial = lines.pop()!;
    for (const line of lines) {
      const msg = /^\{"level":(?:40|50|60),.*"msg":"([^"]*)"/.exec(line)?.[1];
      if (msg !== undefined) problems.set(msg, (problems.get(msg) ?? 0) + 1);
    }
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("gateway listening on") && resolve());
    void exited.then(() => reject(new Error(`the gateway exited early: ${stderr}`)));
  });
  return {
    child,
    problems: () => problems,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Message `i` of a burst from `chats` chats: from chat `firstChat + i % chats`, its message number `i / chats + 1`. */
function dm(i: number, chats: number, firstChat: number, word: string): Omit<Update, "update_id"> {
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

/**
 * One burst: the gateway up and polling, warmed up by 300 DMs from 100 other chats (code loaded and
 * compiled on first use is not what is measured), then every update queued at once, timed to the last reply.
 */
async function runBurst(): Promise<{
  ms: number;
  before: ProcessUsage | undefined;
  after: ProcessUsage | undefined;
  problems: string[];
}> {
  const fake = await startFakeTelegramServer();
  const home = await mkdtemp(path.join(os.tmpdir(), "sb-bench-e2e-"));
  const gateway = await startGateway(home, fake.apiRoot);
  try {
    for (let i = 0; i < 300; i++) fake.push(dm(i, 100, 9_000, "warm-up"));
    await repliesReached(fake, 300, 120_000);
    const before = await processUsage(gateway.child.pid!);
    const started = performance.now();
    for (let i = 0; i < MESSAGES; i++) fake.push(dm(i, CHATS, 1_000, "hello"));
    const ended = await repliesReached(fake, 300 + MESSAGES, 600_000);
    const after = await processUsage(gateway.child.pid!);
    await gateway.stop();
    const problems = replyProblems(fake);
    for (const [msg, count] of gateway.problems()) problems.push(`logged ${count} x "${msg}"`);
    return { ms: ended - started, before, after, problems };
  } finally {
    await gateway.stop();
    await fake.close();
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * Telegram end to end: a fake Bot API on 127.0.0.1 holds 10,000 DMs from 1,000 chats; the real
 * gateway process (`bin/switchboard gateway run`) polls them with the real grammy adapter, stores
 * each before the offset moves, runs the offline model, and sends every reply back through the Bot
 * API. Timed from queueing the updates to the last reply at the fake; CPU and peak RSS are the
 * gateway process's own (Linux `/proc`).
 */
export async function benchTelegramEndToEnd(): Promise<BenchTable> {
  const { ms, before, after, problems } = await runBurst();
  const rate = Math.round((MESSAGES / ms) * 1000);
  const cpuMs = before && after ? after.cpuMs - before.cpuMs : undefined;
  const peak = after ? Math.round(after.peakRssMiB) : undefined;
  const notes = [...problems.map((p) => `FAIL ${p}`), verdict("end-to-end msgs/s", rate, 1_000, "msgs/s", false)];
  if (peak !== undefined) notes.push(verdict("gateway peak RSS", peak, 400, "MiB", true));
  return {
    title: "Telegram end to end (fake Bot API on 127.0.0.1, real grammy polling, real gateway process, offline model)",
    rows: [
      {
        case: `${MESSAGES.toLocaleString("en-US")} DMs from ${CHATS.toLocaleString("en-US")} chats, all queued at once`,
        "total s": Number((ms / 1000).toFixed(2)),
        "msgs/s": rate,
        "gateway CPU ms/msg": cpuMs === undefined ? "n/a" : Number((cpuMs / MESSAGES).toFixed(2)),
        "gateway peak RSS MiB": peak ?? "n/a",
      },
    ],
    notes,
  };
}
