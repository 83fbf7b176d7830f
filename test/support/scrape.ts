// Reads a Prometheus text exposition (what GET /metrics serves) into samples a test can look up.

/** One sample line: its metric name, labels and value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Every sample of a text exposition (comments skipped). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** A scraped exposition: `value(name, labels)` sums the samples of `name` whose labels include `labels`. */
function scraped(text: string) {
  const samples = parseExposition(text);
  return {
    text,
    samples,
    value(name: string, labels: Record<string, string> = {}): number {
      return samples
        .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        .reduce((sum, s) => sum + s.value, 0);
    },
    has: (name: string) => samples.some((s) => s.name === name),
  };
}

/**
 * GET `<base>/metrics` over HTTP (with a bearer token when given), or read a registry's exposition
 * directly (`{ text }`), as Prometheus would read it.
 */
export async function scrape(source: string | { text: () => Promise<string> }, token?: string) {
  if (typeof source !== "string") return scraped(await source.text());
  const res = await fetch(`${source}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${await res.text()}`);
  return scraped(await res.text());
}
