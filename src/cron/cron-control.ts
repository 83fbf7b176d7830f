import type { CronControl, CronJobInfo } from "../commands/command-deps.js";
import type { CronJob } from "./cron-job.js";
import type { CronScheduler } from "./cron-scheduler.js";

/** `2026-11-24 08:00 Europe/Berlin`: a time in a zone, to the minute. */
function formatZoned(ms: number, zone: string): string {
  const text = new Intl.DateTimeFormat("sv-SE", {
    timeZone: zone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
  }).format(ms);
  return `${text} ${zone}`;
}

function seconds(ms: number): string {
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
  ] as const)
    if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms / 1000}s`;
}

/** A job as people read it in `/cron`. */
function cronJobInfo(job: CronJob): CronJobInfo {
  const s = job.schedule;
  const zone = s.kind === "cron" ? s.tz : "UTC";
  const schedule =
    s.kind === "cron"
      ? `cron "${s.expr}" ${s.tz}`
      : s.kind === "every"
        ? `every ${seconds(s.everyMs)}`
        : `at ${formatZoned(s.atMs, "UTC")}`;
  const { nextRunAt, lastStatus, lastError } = job.state;
  return {
    id: job.id,
    name: job.name,
    schedule,
    enabled: job.enabled,
    announce: job.delivery.mode === "announce" ? job.delivery.to : "none",
    ...(job.enabled && nextRunAt !== undefined && { nextRun: formatZoned(nextRunAt, zone) }),
    ...(lastStatus && { last: lastError && lastStatus !== "ok" ? `${lastStatus} (${lastError})` : lastStatus }),
  };
}

/** The scheduler as the `/cron` command sees it. */
export function cronControlOf(scheduler: CronScheduler): CronControl {
  return {
    list: () => scheduler.list().map(cronJobInfo),
    run: async (id) => (await scheduler.runNow(id)).runId,
    setEnabled: async (id, enabled) => void (await scheduler.update(id, { enabled })),
    remove: (id) => scheduler.remove(id),
  };
}
