import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { writeFileAtomic, serializeRecord } from "../src/sessions/atomic-json-file.js";
import { createMemoryLogger } from "../src/logger.js";
import { createSessionStore } from "../src/sessions/session-store.js";

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** A realistic row: a group session with origin, route and usage. */
function row(i: number) {
  return {
    sessionId: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    updatedAt: 1_700_000_000_000 + i,
    channel: "telegram",
    chatType: "group",
    displayName: `telegram:g-${i}`,
    origin: {
      label: `Group ${i} id:-100${i}`,
      channel: "telegram",
      chatType: "group",
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

/** Patch latency and burst throughput in stores of 1k, 10k and 100k sessions. */
export async function benchSessionStore(): Promise<Array<Record<string, string | number>>> {
  const rows: Array<Record<string, string | number>> = [];
  for (const size of [1_000, 10_000, 100_000]) {
    const dir = await mkdtemp(path.join(os.tmpdir(), "sb-bench-store-"));
    const file = path.join(dir, "sessions.json");
    const data = Object.fromEntries(
      Array.from({ length: size }, (_, i) => [`agent:main:telegram:group:-100${i}`, row(i)]),
    );
    await writeFileAtomic(file, serializeRecord(data));
    const openStart = performance.now();
    const store = await createSessionStore({ path: file, keys: {}, logger: createMemoryLogger() });
    const openMs = performance.now() - openStart;
    const single: number[] = [];
    for (let i = 0; i < 9; i++) {
      const start = performance.now();
      await store.patch("agent:main:telegram:group:-1007", () => ({ updatedAt: Date.now(), totalTokens: i }));
      single.push(performance.now() - start);
    }
    const burst = 500;
    const burstStart = performance.now();
    await Promise.all(
      Array.from({ length: burst }, (_, i) =>
        store.patch(`agent:main:telegram:group:-100${i}`, () => ({ updatedAt: Date.now() })),
      ),
    );
    const burstMs = performance.now() - burstStart;
    rows.push({
      sessions: size.toLocaleString("en-US"),
      "open ms": Math.round(openMs),
      "single patch ms (median of 9)": Number(median(single).toFixed(1)),
      "burst: 500 patches ms": Math.round(burstMs),
      "burst patches/s": Math.round((burst / burstMs) * 1000).toLocaleString("en-US"),
    });
    await rm(dir, { recursive: true, force: true });
  }
  console.log("\nsession store (one agent's sessions.json; every patch acknowledged only once on disk)");
  console.table(rows);
  return rows;
}
