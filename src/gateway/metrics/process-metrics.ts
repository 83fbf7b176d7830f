import { Registry, collectDefaultMetrics } from "prom-client";

let started: Registry | undefined;

/**
 * Puts prom-client's default process metrics (CPU, memory, heap, event-loop lag, GC, handles) on
 * `registry`. They are started once per process and shared by every gateway registry in it: each
 * start adds a GC observer and an event-loop monitor that prom-client never stops, so one per
 * registry would pile up (a callback per collection each) in a process that builds several.
 */
export function registerProcessMetrics(registry: Registry): void {
  if (!started) {
    started = new Registry();
    collectDefaultMetrics({ register: started });
  }
  for (const { name } of started.getMetricsAsArray()) {
    const metric = started.getSingleMetric(name);
    if (metric) registry.registerMetric(metric);
  }
}
