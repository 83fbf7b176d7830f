import { Cron } from "croner";
import type { CronSchedule } from "./cron-job.js";

/**
 * The first time strictly after `after` (ms) that `schedule` falls on, or undefined when it never
 * will again. Cron expressions are evaluated in their IANA zone by croner, so "0 8 * * *" in
 * Europe/Berlin stays at 08:00 local across DST changes; an hour the clock skips runs once at the
 * next valid minute and an hour it repeats runs once.
 */
export function nextRunAt(schedule: CronSchedule, after: number, createdAt: number): number | undefined {
  switch (schedule.kind) {
    case "at":
      return schedule.atMs > after ? schedule.atMs : undefined;
    case "every": {
      const anchor = schedule.anchorMs ?? createdAt;
      if (after < anchor) return anchor;
      return anchor + (Math.floor((after - anchor) / schedule.everyMs) + 1) * schedule.everyMs;
    }
    case "cron": {
      const next = new Cron(schedule.expr, { timezone: schedule.tz, mode: "5-part", paused: true }).nextRun(
        new Date(after),
      );
      return next ? next.getTime() : undefined;
    }
  }
}

/** Checks that a cron expression parses (croner's message otherwise), for validation at the edge. */
export function cronExpressionError(expr: string, tz: string): string | undefined {
  try {
    new Cron(expr, { timezone: tz, mode: "5-part", paused: true }).nextRun();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
