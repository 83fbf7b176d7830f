/** What a running gateway's own `GET /metrics` counts so far, for a burst's before-and-after difference. */
export interface GatewayReadings {
  /** journal batches (each one write and one `fdatasync`: `switchboard_journal_sync_duration_seconds`) */
  syncs: number;
  /** their write-and-sync seconds together */
  syncSeconds: number;
  /** young-generation collections (scavenges: prom-client's `nodejs_gc_duration_seconds`, kind "minor") */
  scavenges: number;
  /** full collections (mark-compacts, kind "major") */
  markCompacts: number;
  /** the main thread's seconds in collector pauses, every kind */
  gcSeconds: number;
}

/** Reads the counters above from the gateway at `http` (its base URL). */
export async function gatewayReadings(http: string): Promise<GatewayReadings> {
  const text = await (await fetch(`${http}/metrics`)).text();
  const read = (series: string) => {
    const line = text.split("\n").find((l) => l.startsWith(`${series} `));
    return Number(line?.slice(series.length + 1) ?? Number.NaN);
  };
  const gc = (suffix: string, kind: string) => read(`nodejs_gc_duration_seconds_${suffix}{kind="${kind}"}`) || 0;
  return {
    syncs: read("switchboard_journal_sync_duration_seconds_count"),
    syncSeconds: read("switchboard_journal_sync_duration_seconds_sum"),
    scavenges: gc("count", "minor"),
    markCompacts: gc("count", "major"),
    gcSeconds: ["minor", "major", "incremental", "weakcb"].reduce((sum, kind) => sum + gc("sum", kind), 0),
  };
}

/** `after - before`, field by field: what happened during a burst. */
export function readingsBetween(before: GatewayReadings, after: GatewayReadings): GatewayReadings {
  const keys = Object.keys(before) as (keyof GatewayReadings)[];
  return Object.fromEntries(keys.map((key) => [key, after[key] - before[key]])) as unknown as GatewayReadings;
}
