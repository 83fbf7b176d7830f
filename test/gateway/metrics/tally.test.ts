import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createGatewayMetrics } from "../../../src/gateway/metrics/gateway-metrics.js";
import { tallyCounter, tallyHistogram } from "../../../src/gateway/metrics/tally.js";
import { scrape } from "../../support/scrape.js";

const read = (registry: Registry) => scrape({ text: () => registry.metrics() });

describe("tally metrics", () => {
  it("counts a kept series and a looked-up one of the same label set as one, apart from other label sets", async () => {
    const registry = new Registry();
    const counter = tallyCounter(registry, { name: "t_total", help: "t", labelNames: ["channel", "outcome"] });
    const kept = counter.labels({ channel: "telegram", outcome: "turn" });
    kept.inc();
    counter.labels({ channel: "telegram", outcome: "turn" }).inc(2);
    counter.labels({ channel: "telegram", outcome: "command" }).inc();
    // The same values under other names are another label set.
    counter.labels({ channel: "turn", outcome: "telegram" }).inc(5);
    const m = await read(registry);
    expect(m.value("t_total", { channel: "telegram", outcome: "turn" })).toBe(3);
    expect(m.value("t_total", { channel: "telegram", outcome: "command" })).toBe(1);
    expect(m.value("t_total", { channel: "turn", outcome: "telegram" })).toBe(5);
    expect(m.samples.filter((s) => s.name === "t_total")).toHaveLength(3);
  });

  it("puts an observation equal to a bucket's bound in that bucket and one above the last only in +Inf", async () => {
    const registry = new Registry();
    const histogram = tallyHistogram(registry, { name: "h_seconds", help: "h", labelNames: ["kind"], buckets: [1, 2] });
    const series = histogram.labels({ kind: "a" });
    for (const value of [0.5, 1, 2, 7]) series.observe(value);
    const m = await read(registry);
    expect(m.value("h_seconds_bucket", { kind: "a", le: "1" })).toBe(2);
    expect(m.value("h_seconds_bucket", { kind: "a", le: "2" })).toBe(3);
    expect(m.value("h_seconds_bucket", { kind: "a", le: "+Inf" })).toBe(4);
    expect(m.value("h_seconds_sum", { kind: "a" })).toBe(10.5);
    expect(m.value("h_seconds_count", { kind: "a" })).toBe(4);
  });

  it("zeroes a reset registry's series in place, so a series kept before the reset still counts", async () => {
    const registry = new Registry();
    const counter = tallyCounter(registry, { name: "r_total", help: "r", labelNames: ["channel"] });
    const kept = counter.labels({ channel: "discord" });
    kept.inc(4);
    registry.resetMetrics();
    kept.inc();
    expect((await read(registry)).value("r_total", { channel: "discord" })).toBe(1);
  });

  it("shows the process metrics in every gateway registry of a process, started once and shared", async () => {
    const first = createGatewayMetrics();
    const second = createGatewayMetrics();
    for (const metrics of [first, second]) {
      const m = await read(metrics.registry);
      expect(m.has("process_cpu_user_seconds_total")).toBe(true);
      expect(m.text).toContain("# TYPE nodejs_gc_duration_seconds histogram");
    }
    // One GC observer and one event-loop monitor for the process, not one more per registry.
    expect(second.registry.getSingleMetric("nodejs_gc_duration_seconds")).toBe(
      first.registry.getSingleMetric("nodejs_gc_duration_seconds"),
    );
    expect(second.registry.getSingleMetric("nodejs_eventloop_lag_seconds")).toBe(
      first.registry.getSingleMetric("nodejs_eventloop_lag_seconds"),
    );
  });
});
