/** Delays after 1, 2, 3, 4, 5+ consecutive failures: 30 s, 1 min, 5 min, 15 min, 60 min. */
const CRON_BACKOFF_MS = [30_000, 60_000, 300_000, 900_000, 3_600_000] as const;

/** How long a job waits after `failures` consecutive failures (0: no wait). */
export function cronBackoffMs(failures: number): number {
  if (failures <= 0) return 0;
  return CRON_BACKOFF_MS[Math.min(failures, CRON_BACKOFF_MS.length) - 1]!;
}
