/** One measured case of a benchmark table. */
export interface BenchCase {
  name: string;
  run: () => unknown;
}

/** Median time per call over `batches` batches of `perBatch` calls, after a warm-up batch. */
function measure(fn: () => unknown, perBatch = 2_000, batches = 15): number {
  for (let i = 0; i < perBatch; i++) fn();
  const samples: number[] = [];
  for (let b = 0; b < batches; b++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < perBatch; i++) fn();
    samples.push(Number(process.hrtime.bigint() - start) / perBatch);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

/** One printed table: a title, its rows, and lines said under it (goals, verdicts). */
export interface BenchTable {
  title: string;
  rows: Array<Record<string, string | number>>;
  notes?: string[];
}

/** Runs every case: median ns per call and calls per second (sub-microsecond cases want bigger batches). */
export function measureCases(
  title: string,
  cases: readonly BenchCase[],
  batch: { perBatch?: number; batches?: number } = {},
): BenchTable {
  const rows = cases.map((c) => {
    const ns = measure(c.run, batch.perBatch, batch.batches);
    return { case: c.name, "median ns/op": Math.round(ns), "ops/s": Math.round(1e9 / ns) };
  });
  return { title, rows };
}

/** "PASS" or "FAIL" with the measure and its goal, for a note under a table. */
export function verdict(what: string, value: number, goal: number, unit: string, atMost: boolean): string {
  const pass = atMost ? value <= goal : value >= goal;
  return `${pass ? "PASS" : "FAIL"} ${what}: ${value.toLocaleString("en-US")} ${unit} (goal ${atMost ? "<=" : ">="} ${goal.toLocaleString("en-US")})`;
}

/** Median wall time in ms of `runs` awaited calls of `fn`, after `warmup` calls. */
export async function measureAsync(fn: () => Promise<unknown>, runs = 30, warmup = 5): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}
