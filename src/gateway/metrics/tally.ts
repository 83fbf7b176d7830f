import type { Metric, Registry } from "prom-client";

/** One label set and what was counted under it. */
interface Row<T extends string> {
  labels: Record<T, string>;
  value: number;
}

/** The key of a label set: its values in the metric's label order. */
function keyOf<T extends string>(labelNames: readonly T[], labels: Record<T, string>): string {
  let key = "";
  for (const name of labelNames) key += `${labels[name]}\u0000`;
  return key;
}

/** Puts a metric on `registry` that the registry renders from `values` at scrape time. */
function register(
  registry: Registry,
  spec: { name: string; help: string; type: "counter" | "histogram" },
  values: () => Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>,
  reset: () => void,
): void {
  const metric = {
    ...spec,
    aggregator: "sum",
    get: async () => ({ ...spec, aggregator: "sum", values: values() }),
    reset,
  };
  registry.registerMetric(metric as unknown as Metric);
}

/**
 * A counter kept in plain numbers and rendered by the prom-client registry when scraped: a
 * prom-client counter hashes its label object on every `inc`, about ten times the cost of this
 * on the message path.
 */
export function tallyCounter<T extends string>(
  registry: Registry,
  spec: { name: string; help: string; labelNames: readonly T[] },
) {
  const rows = new Map<string, Row<T>>();
  register(
    registry,
    { name: spec.name, help: spec.help, type: "counter" },
    () => [...rows.values()].map((row) => ({ labels: row.labels, value: row.value })),
    () => rows.clear(),
  );
  return {
    inc(labels: Record<T, string>, by = 1): void {
      const key = keyOf(spec.labelNames, labels);
      const row = rows.get(key);
      if (row) row.value += by;
      else rows.set(key, { labels: { ...labels }, value: by });
    },
  };
}

/** Per label set: observations per bucket (not cumulative), their sum and count. */
interface Buckets<T extends string> {
  labels: Record<T, string>;
  counts: number[];
  sum: number;
  count: number;
}

/** A histogram kept like {@link tallyCounter}: `_bucket` (cumulative, `le`), `_sum` and `_count` at scrape time. */
export function tallyHistogram<T extends string>(
  registry: Registry,
  spec: { name: string; help: string; labelNames: readonly T[]; buckets: readonly number[] },
) {
  const rows = new Map<string, Buckets<T>>();
  const { name, buckets } = spec;
  const values = () =>
    [...rows.values()].flatMap((row) => {
      let cumulative = 0;
      const out = buckets.map((le, i) => {
        cumulative += row.counts[i]!;
        return { metricName: `${name}_bucket`, labels: { le, ...row.labels }, value: cumulative };
      });
      out.push({ metricName: `${name}_bucket`, labels: { le: "+Inf", ...row.labels } as never, value: row.count });
      return [
        ...out,
        { metricName: `${name}_sum`, labels: row.labels, value: row.sum },
        { metricName: `${name}_count`, labels: row.labels, value: row.count },
      ];
    });
  register(registry, { name, help: spec.help, type: "histogram" }, values, () => rows.clear());
  const add = (key: string, labels: Record<T, string>): Buckets<T> => {
    const row = { labels: { ...labels }, counts: new Array<number>(buckets.length).fill(0), sum: 0, count: 0 };
    rows.set(key, row);
    return row;
  };
  // Without labels there is one series: shown (as zeros) before the first observation.
  if (spec.labelNames.length === 0) add("", {} as Record<T, string>);
  return {
    observe(labels: Record<T, string>, value: number): void {
      const key = keyOf(spec.labelNames, labels);
      const row = rows.get(key) ?? add(key, labels);
      const index = buckets.findIndex((le) => value <= le);
      if (index >= 0) row.counts[index]!++;
      row.sum += value;
      row.count++;
    },
  };
}
