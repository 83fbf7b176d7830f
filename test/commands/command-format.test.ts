import { describe, expect, it } from "vitest";
import { RUN_ENDS } from "../../src/agents/run-end.js";
import {
  describeResetPolicy,
  formatAge,
  formatRunEnd,
  formatSpan,
  formatTokens,
} from "../../src/commands/command-format.js";

describe("formatTokens", () => {
  it.each([
    [0, "0"],
    [999, "999"],
    [1000, "1k"],
    [1234, "1.2k"],
    [9999, "10k"],
    [12_345, "12k"],
    [1_500_000, "1.5m"],
  ])("%d is %s", (count, text) => {
    expect(formatTokens(count)).toBe(text);
  });
});

describe("formatSpan", () => {
  it.each([
    [45_000, "45s"],
    [12 * 60_000, "12m"],
    [5 * 3_600_000, "5h"],
    [47 * 3_600_000, "47h"],
    [49 * 3_600_000, "2d"],
    [-5, "0s"],
  ])("%d ms is %s", (ms, text) => {
    expect(formatSpan(ms)).toBe(text);
  });
});

describe("formatAge", () => {
  it("says just now under a minute, else how long ago", () => {
    expect(formatAge(1_000, 30_000)).toBe("just now");
    expect(formatAge(0, 3 * 3_600_000)).toBe("3h ago");
  });
});

describe("describeResetPolicy", () => {
  it.each<[Parameters<typeof describeResetPolicy>[0], string]>([
    [{ mode: "daily", atHour: 4 }, "daily at 04:00"],
    [{ mode: "idle", atHour: 4, idleMinutes: 60 }, "after 60 idle minutes"],
    [
      { mode: "daily", atHour: 23, idleMinutes: 120 },
      "daily at 23:00 or after 120 idle minutes, whichever comes first",
    ],
  ])("%o reads %s", (policy, text) => {
    expect(describeResetPolicy(policy)).toBe(text);
  });
});

describe("formatRunEnd", () => {
  it("words an aborted run as stopped and every other end as itself", () => {
    expect(RUN_ENDS.map(formatRunEnd)).toEqual(["ok", "error", "timeout", "stopped"]);
  });
});
