import { mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import { createMemoryLogger } from "../src/logger.js";
import { serializeRecord, writeFileAtomic } from "../src/state/atomic-json-file.js";
import { createSessionStore } from "../src/sessions/session-store.js";
import { type BenchTable, verdict } from "./harness.js";
import { openLocalState } from "../src/state/local-state.js";

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** A realistic row: a group session with origin, route and usage. */
export function storeRow(i: number) {
  return {
    sessionId: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    updatedAt: 1_700_000_000_000 + i,
    channel: "telegram",
    chatType: "group" as const,
    displayName: `telegram:g-${i}`,
    origin: {
      label: `Group ${i} id:-100${i}`,
      channel: "telegram",
      chatType: "group" as const,
      from: `telegram:group:-100${i}`,
      to: `-100${i}`,
    },
    deliveryContext: { channel: "telegram", to: `-100${i}`, accountId: "default" },
    lastChannel: "telegram",
    lastTo: `-100${i}`,
    model: "offline/echo",
    inputTokens: 1200,
    outputTokens: 300,
    totalTokens: 1500,
  };
}

/** A real `gc()`, so memory figures measure live data and not garbage. */
function collector(): () => void {
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc") as () => void;
}

const BURST = 5_000;

/**
 * Patch latency and burst throughput in stores of 1k, 10k and 100k sessions, the time to open a
 * store the gateway wrote itself and a hand-written one, and the memory a 100k store holds.
 */
export async function benchSessionStore(): Promise<BenchTable> {
  const gc = collector();
  const rows: Array<Record<string, string | number>> = [];
  const notes: string[] = [];
  const openStore = (file: string) => {
    const logger = createMemoryLogger();
    return createSessionStore({
      state: openLocalState({ dir: path.dirname(file), logger }),
      path: file,
      keys: {},
      logger,
    });
  };
  for (const size of [1_000, 10_000, 100_000]) {
    const dir = await mkdtemp(path.join(os.tmpdir(), "sb-bench-store-"));
    const file = path.join(dir, "sessions.json");
    const data = Object.fromEntries(
      Array.from({ length: size }, (_, i) => [`agent:main:telegram:group:-100${i}`, storeRow(i)]),
    );
    await writeFileAtomic(file, serializeRecord(data));
    const snapshotBytes = (await stat(file)).size;
    // A file written by hand (or by an older version): every row is checked and every key canonicalized.
    let openStart = performance.now();
    const first = await openStore(file);
    const foreignOpenMs = performance.now() - openStart;
    await first.close();
    // The store's own snapshot (what every start after a clean stop reads).
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    openStart = performance.now();
    const store = await openStore(file);
    const openMs = performance.now() - openStart;
    gc();
    const heapBytes = process.memoryUsage().heapUsed - heapBefore;
    const single: number[] = [];
    for (let i = 0; i < 31; i++) {
      const start = performance.now();
      await store.patch("agent:main:telegram:group:-1007", () => ({ updatedAt: Date.now(), totalTokens: i }));
      single.push(performance.now() - start);
    }
    const burstStart = performance.now();
    await Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        store.patch(`agent:main:telegram:group:-100${(i * 7919) % size}`, () => ({ updatedAt: Date.now() })),
      ),
    );
    const burstMs = performance.now() - burstStart;
    const closeStart = performance.now();
    await store.close();
    const closeMs = performance.now() - closeStart;
    const patchMs = median(single);
    const burstRate = Math.round((BURST / burstMs) * 1000);
    rows.push({
      sessions: size,
      "snapshot MB": Number((snapshotBytes / 1e6).toFixed(1)),
      "open ms (own snapshot)": Math.round(openMs),
      "open ms (hand-written file)": Math.round(foreignOpenMs),
      "heap MB after open": Number((heapBytes / 1e6).toFixed(1)),
      "single patch ms (median of 31)": Number(patchMs.toFixed(2)),
      [`burst: ${BURST} patches ms`]: Math.round(burstMs),
      "burst patches/s": burstRate,
      "close (snapshot) ms": Math.round(closeMs),
    });
    notes.push(verdict(`single patch at ${size.toLocaleString("en-US")}`, Number(patchMs.toFixed(2)), 5, "ms", true));
    if (size === 100_000) {
      notes.push(verdict("burst at 100,000", burstRate, 5_000, "patches/s", false));
      notes.push(verdict("open at 100,000 (own snapshot)", Math.round(openMs), 1_500, "ms", true));
      notes.push(
        verdict("heap at 100,000 / snapshot size", Number((heapBytes / snapshotBytes).toFixed(2)), 2, "x", true),
      );
    }
    await rm(dir, { recursive: true, force: true });
  }
  return {
    title: "session store (one agent's sessions.json + journal; every patch acknowledged only once synced)",
    rows,
    notes,
  };
}
