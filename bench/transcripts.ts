import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import type { Logger } from "../src/logger.js";
import { createTranscripts } from "../src/sessions/transcripts/index.js";
import { type BenchTable, measureAsync } from "./harness.js";

const SIZES = [1_000, 100_000, 1_000_000];
const LIMIT = 20;
const silent: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** A ~200-byte line; every tenth one a tool result, so the default filter has work to do. */
function line(i: number): string {
  const role = i % 10 === 9 ? "toolResult" : i % 2 === 0 ? "user" : "assistant";
  const text = `message ${i}: the quick brown fox jumps over the lazy dog, then asks for the weather in Oslo.`;
  return `{"type":"message","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"${role}","content":"${text}","timestamp":${1767225600000 + i}}}\n`;
}

async function writeTranscript(file: string, lines: number): Promise<void> {
  const out = createWriteStream(file);
  out.write(`{"type":"session","version":1,"id":"bench","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n`);
  for (let start = 0; start < lines; start += 10_000) {
    let batch = "";
    for (let i = start; i < Math.min(lines, start + 10_000); i++) batch += line(i);
    if (!out.write(batch)) await once(out, "drain");
  }
  out.end();
  await once(out, "close");
}

/** A real `gc()`, so memory deltas measure one read and not leftovers. */
function collector(): () => void {
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc") as () => void;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Median growth of the JS heap and of Buffer memory over single reads (nothing is freed in between), in KiB. */
async function memoryGrowth(fn: () => Promise<unknown>, gc: () => void): Promise<{ heap: number; buffers: number }> {
  const heap: number[] = [];
  const buffers: number[] = [];
  for (let i = 0; i < 9; i++) {
    gc();
    const before = process.memoryUsage();
    await fn();
    const after = process.memoryUsage();
    heap.push(after.heapUsed - before.heapUsed);
    buffers.push(after.arrayBuffers - before.arrayBuffers);
  }
  return { heap: Math.round(median(heap) / 1024), buffers: Math.round(median(buffers) / 1024) };
}

/** "Last 20 messages" from transcripts of 1k, 100k and 1M lines: the cost must not grow with the file. */
export async function benchTranscripts(): Promise<BenchTable> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "switchboard-bench-transcripts-"));
  const gc = collector();
  try {
    const transcripts = createTranscripts({ dir, logger: silent });
    const rows: Record<string, string | number>[] = [];
    let baseline = 0;
    let ratio = 0;
    for (const lines of SIZES) {
      const file = `bench-${lines}.jsonl`;
      const started = process.hrtime.bigint();
      await writeTranscript(path.join(dir, file), lines);
      const generated = Number(process.hrtime.bigint() - started) / 1e9;
      const read = () => transcripts.readTail(file, { limit: LIMIT });
      const page = await read();
      if (page.messages.length !== LIMIT || !page.hasMore)
        throw new Error(`expected ${LIMIT} messages and more pages from ${file}`);
      const ms = await measureAsync(read, 50, 10);
      baseline ||= ms;
      ratio = ms / baseline;
      const memory = await memoryGrowth(read, gc);
      rows.push({
        lines: lines.toLocaleString("en-US"),
        "file MB": Number(((await stat(path.join(dir, file))).size / 1e6).toFixed(1)),
        "generate s": Number(generated.toFixed(2)),
        "median ms (last 20)": Number(ms.toFixed(3)),
        "ratio to 1k": Number(ratio.toFixed(2)),
        "heap growth KiB": memory.heap,
        "buffer growth KiB": memory.buffers,
      });
    }
    return {
      title: `transcripts: readTail limit ${LIMIT} (includeTools false)`,
      rows,
      notes: [`${ratio <= 2 ? "PASS" : "FAIL"} 1M / 1k time ratio ${ratio.toFixed(2)} (goal <= 2)`],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
