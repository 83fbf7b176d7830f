import type { Metric, Registry } from "prom-client";

/**
 * The series of one metric, one per label set, found by walking one map per label name: looking
 * a label set up allocates nothing, and a caller that keeps the series it got (a labelled child,
 * as prom-client's `labels()`) skips even the walk.
 */
function seriesByLabels<T extends string, S>(labelNames: readonly T[], make: (labels: Record<T, string>) => S) {
  const all: S[] = [];
  const root = new Map<string, unknown>();
  let leaf: S | undefined;
  return {
    all,
    get(labels: Record<T, string>): S {
      if (labelNames.length === 0) {
        leaf ??= add(labels);
        return leaf;
      }
      let node = root;
      const last = labelNames.length - 1;
      for (let i = 0; i < last; i++) {
        const value = labels[labelNames[i]!];
        let next = node.get(value) as Map<string, unknown> | undefined;
        if (!next) {
          next = new Map();
          node.set(value, next);
        }
        node = next;
      }
      const value = labels[labelNames[last]!];
      return (node.get(value) as S | undefined) ?? add(labels, node, value);
    },
  };
  function add(labels: Record<T, string>, parent?: Map<string, unknown>, value?: string): S {
    const series = make({ ...labels });
    all.push(series);
    parent?.set(value!, series);
    return series;
  }
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

/** One label set of a {@link tallyCounter}. */
interface CounterSeries {
  inc(by?: number): void;
}

/** One label set of a {@link tallyHistogram}. */
interface HistogramSeries {
  observe(value: number): void;
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
  const series = seriesByLabels(spec.labelNames, (labels) => {
    const row = {
      labels,
      value: 0,
      inc(by = 1): void {
        row.value += by;
      },
    };
    return row;
  });
  register(
    registry,
    { name: spec.name, help: spec.help, type: "counter" },
    () => series.all.map((row) => ({ labels: row.labels, value: row.value })),
    // Zeroed in place, not forgotten: a caller may keep a series.
    () => {
      for (const row of series.all) row.value = 0;
    },
  );
  return {
    /** the series of one label set, to keep where the labels do not change */
    labels: (labels: Record<T, string>): CounterSeries => series.get(labels),
  };
}

/** One label set of a histogram: observations per bucket (not cumulative), their sum and count. */
function histogramRow<T extends string>(labels: Record<T, string>, buckets: readonly number[]) {
  const row = {
    labels,
    counts: new Array<number>(buckets.length).fill(0),
    sum: 0,
    count: 0,
    observe(value: number): void {
      let index = 0;
      while (index < buckets.length && value > buckets[index]!) index++;
      if (index < buckets.length) row.counts[index]!++;
      row.sum += value;
      row.count++;
    },
    reset(): void {
      row.counts.fill(0);
      row.sum = 0;
      row.count = 0;
    },
  };
  return row;
}

/** A row's samples as Prometheus wants them: `_bucket` (cumulative, `le`, `+Inf` last), `_sum`, `_count`. */
function histogramSamples(name: string, buckets: readonly number[], row: ReturnType<typeof histogramRow>) {
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
}

/** A histogram kept like {@link tallyCounter}, rendered by {@link histogramSamples} at scrape time. */
export function tallyHistogram<T extends string>(
  registry: Registry,
  spec: { name: string; help: string; labelNames: readonly T[]; buckets: readonly number[] },
) {
  const { name, buckets } = spec;
  const series = seriesByLabels(spec.labelNames, (labels) => histogramRow(labels, buckets));
  register(
    registry,
    { name, help: spec.help, type: "histogram" },
    () => series.all.flatMap((row) => histogramSamples(name, buckets, row)),
    // Zeroed in place, not forgotten: a caller may keep a series.
    () => {
      for (const row of series.all) row.reset();
    },
  );
  // Without labels there is one series: shown (as zeros) before the first observation.
  if (spec.labelNames.length === 0) series.get({} as Record<T, string>);
  return {
    /** the series of one label set, to keep where the labels do not change */
    labels: (labels: Record<T, string>): HistogramSeries => series.get(labels),
  };
}
