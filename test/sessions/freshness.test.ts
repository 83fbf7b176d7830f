import { afterAll, describe, expect, it } from "vitest";
import { dailyBoundary, evaluateFreshness } from "../../src/sessions/freshness.js";

// Local-time semantics are what users configure ("4 am where the gateway runs"), so these tests
// pin a zone with daylight saving time, before the tables below are built. This file shares its
// worker with other unit files (vitest.config.ts, isolate: false): afterAll puts TZ back.
const savedTz = process.env.TZ;
process.env.TZ = "America/New_York";
afterAll(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

const local = (y: number, mo: number, d: number, h: number, mi = 0) => new Date(y, mo - 1, d, h, mi).getTime();
const daily = { mode: "daily" as const, atHour: 4 };

describe("evaluateFreshness", () => {
  it.each([
    ["a turn before today's 4:00 is stale after it", local(2026, 1, 18, 3), local(2026, 1, 18, 5), daily, false],
    [
      "before 4:00, a turn before yesterday's 4:00 is stale",
      local(2026, 1, 17, 3, 30),
      local(2026, 1, 18, 3),
      daily,
      false,
    ],
    ["a turn exactly at 4:00 is fresh", local(2026, 1, 18, 4), local(2026, 1, 18, 5), daily, true],
    ["before 4:00, a turn after yesterday's 4:00 is fresh", local(2026, 1, 17, 5), local(2026, 1, 18, 3), daily, true],
    [
      "with both, the idle window can expire first",
      local(2026, 1, 18, 4, 45),
      local(2026, 1, 18, 5, 30),
      { ...daily, idleMinutes: 30 },
      false,
    ],
    [
      "idle only ignores the daily boundary",
      local(2026, 1, 18, 3, 30),
      local(2026, 1, 18, 5),
      { mode: "idle" as const, atHour: 4, idleMinutes: 240 },
      true,
    ],
  ])("%s", (_name, updatedAt, now, policy, fresh) => {
    expect(evaluateFreshness(updatedAt, policy, now).fresh).toBe(fresh);
  });

  it("exactly at the idle limit is fresh, one millisecond later stale", () => {
    const policy = { mode: "idle" as const, atHour: 4, idleMinutes: 60 };
    expect(evaluateFreshness(0, policy, 3_600_000)).toMatchObject({ fresh: true });
    expect(evaluateFreshness(0, policy, 3_600_001)).toMatchObject({ fresh: false, staleBy: "idle" });
  });

  it("says which limit expired and when the session expires", () => {
    const updatedAt = local(2026, 1, 18, 3);
    expect(evaluateFreshness(updatedAt, daily, local(2026, 1, 18, 3, 30))).toEqual({
      fresh: true,
      expiresAt: local(2026, 1, 18, 4),
    });
    expect(evaluateFreshness(updatedAt, daily, local(2026, 1, 18, 4))).toMatchObject({
      fresh: false,
      staleBy: "daily",
    });
  });

  it("resets once at 4:00 local on the spring-forward day (23-hour day)", () => {
    // 2026-03-08: clocks go from 2:00 EST to 3:00 EDT.
    const boundary = dailyBoundary(local(2026, 3, 8, 12), 4);
    expect(new Date(boundary).getHours()).toBe(4);
    expect(boundary - dailyBoundary(local(2026, 3, 7, 12), 4)).toBe(23 * 3_600_000);
    expect(evaluateFreshness(local(2026, 3, 8, 3, 59), daily, local(2026, 3, 8, 4, 1)).fresh).toBe(false);
    expect(evaluateFreshness(local(2026, 3, 8, 4, 1), daily, local(2026, 3, 9, 3, 59)).fresh).toBe(true);
  });

  it("resets once at 4:00 local on the fall-back day (25-hour day)", () => {
    // 2026-11-01: clocks go from 2:00 EDT back to 1:00 EST.
    const boundary = dailyBoundary(local(2026, 11, 1, 12), 4);
    expect(new Date(boundary).getHours()).toBe(4);
    expect(boundary - dailyBoundary(local(2026, 10, 31, 12), 4)).toBe(25 * 3_600_000);
    // Before 4:00 on the long day, yesterday's boundary (25 hours back) still applies.
    expect(dailyBoundary(local(2026, 11, 1, 3), 4)).toBe(local(2026, 10, 31, 4));
  });

  it("uses the first valid instant when the reset hour does not exist (2:00 on spring-forward day)", () => {
    const boundary = dailyBoundary(local(2026, 3, 8, 12), 2);
    expect(new Date(boundary).getHours()).toBe(3);
    expect(evaluateFreshness(local(2026, 3, 7, 23), { mode: "daily", atHour: 2 }, local(2026, 3, 8, 3, 30)).fresh).toBe(
      false,
    );
  });
});
