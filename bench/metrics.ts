import { performance } from "node:perf_hooks";
import { createGatewayMetrics } from "../src/gateway/metrics/gateway-metrics.js";
import { type BenchTable, measureCases } from "./harness.js";

/** Median ms of `runs` awaited calls of `fn`, after one warm-up call. */
async function medianMs(fn: () => Promise<unknown>, runs = 21): Promise<number> {
  await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return samples.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}

/**
 * What the metrics add to one chat message, call by call (what the message path runs: the inbound
 * outcome, the turn with its latency, one model call with its tokens, the reply's delivery, a
 * journal sync), and what one scrape of a busy gateway costs. Compared with the time one message
 * may take at the inbound goal of 2,000 msgs/s (500 µs).
 */
export async function benchMetrics(): Promise<BenchTable> {
  const metrics = createGatewayMetrics();
  const lanes = Array.from({ length: 1_000 }, (_, i) => ({ running: i % 2 === 0, queued: i % 3 }));
  const pending = Array.from({ length: 1_000 }, (_, i) => ({ createdAt: Date.now() - i }));
  metrics.watch({
    outboxPending: () => pending,
    inboxPending: () => 10,
    lanes: () => lanes,
    chatSlots: () => ({ held: 256, waiting: 10 }),
    mcp: () => [{ state: "connected" }],
    accounts: () => [{ channel: "telegram", accountId: "default", connected: true }],
    now: Date.now,
  });
  // Kept per model as observe-model.ts keeps it (a model's series is made once).
  const model = metrics.modelCalls({ provider: "openai", model: "gpt-4o-mini" });
  // The cheapest count there is, measured under the same load as the rest (a scale for the other rows).
  const counts = new Map<string, number>();
  const turn = { channel: "telegram", agent: "main", outcome: "ok" };
  const message = () => {
    metrics.inbound("telegram", "default", "turn");
    model.observe("ok", 0.8, { input: 1200, output: 80 });
    metrics.delivery({ channel: "telegram", accountId: undefined, result: "sent" });
    metrics.journalSync(0.002);
    metrics.turn(turn, 1.2);
  };
  const table = measureCases(
    "metrics (cost per call on the message path; one scrape with 1,000 busy lanes and 1,000 pending outbox items)",
    [
      { name: "reference: one Map increment", run: () => counts.set("telegram", (counts.get("telegram") ?? 0) + 1) },
      { name: "inbound outcome (counter)", run: () => metrics.inbound("telegram", "default", "turn") },
      { name: "turn (counter, histogram, activity ring)", run: () => metrics.turn(turn, 1.2) },
      {
        name: "model call (histogram, 2 token counters)",
        run: () => model.observe("ok", 0.8, { input: 1200, output: 80 }),
      },
      {
        name: "delivery (counter)",
        run: () => metrics.delivery({ channel: "telegram", accountId: undefined, result: "sent" }),
      },
      { name: "all of one chat message", run: message },
    ],
    { perBatch: 20_000, batches: 15 },
  );
  const perMessageNs = Number(table.rows.at(-1)!["median ns/op"]);
  const scrapeMs = await medianMs(() => metrics.scrape());
  table.rows.push({
    case: "one scrape (GET /metrics body)",
    "median ns/op": Math.round(scrapeMs * 1e6),
    "ops/s": Math.round(1000 / scrapeMs),
  });
  table.notes = [
    `one chat message's metrics: ${(perMessageNs / 1000).toFixed(2)} µs, ${((perMessageNs / 500_000) * 100).toFixed(2)}% of the 500 µs a message may take at 2,000 msgs/s`,
  ];
  return table;
}
