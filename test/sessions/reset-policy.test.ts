import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { parseSessionKey } from "../../src/routing/index.js";
import { resetTypeOf, resolveResetPolicy } from "../../src/sessions/reset-policy.js";

const session = (raw: Record<string, unknown>) => parseConfig({ session: raw }).config.session;
const key = (k: string) => parseSessionKey(k)!;

describe("resolveResetPolicy", () => {
  it.each([
    ["default: daily at 4", {}, "dm", undefined, { mode: "daily", atHour: 4 }],
    [
      "legacy idleMinutes adds an idle window when only resetByType is set",
      { idleMinutes: 240, resetByType: { thread: { mode: "idle" } } },
      "dm",
      undefined,
      { mode: "daily", atHour: 4, idleMinutes: 240 },
    ],
    [
      "a channel override is the only source (legacy ignored, idle default 60)",
      { idleMinutes: 999, resetByChannel: { discord: { mode: "idle" } } },
      "dm",
      "Discord",
      { mode: "idle", atHour: 4, idleMinutes: 60 },
    ],
    [
      "the type override sits on top of reset",
      { reset: { mode: "daily", atHour: 5, idleMinutes: 120 }, resetByType: { group: { mode: "idle" } } },
      "group",
      undefined,
      { mode: "idle", atHour: 5, idleMinutes: 120 },
    ],
    [
      "legacy idleMinutes alone is idle-only",
      { idleMinutes: 240 },
      "dm",
      undefined,
      { mode: "idle", atHour: 4, idleMinutes: 240 },
    ],
    [
      "reset without minutes still takes the legacy window",
      { reset: { mode: "daily" }, idleMinutes: 30 },
      "group",
      undefined,
      { mode: "daily", atHour: 4, idleMinutes: 30 },
    ],
    [
      "an override for another channel does not apply",
      { resetByChannel: { discord: { mode: "idle" } } },
      "dm",
      "telegram",
      { mode: "daily", atHour: 4 },
    ],
  ] as const)("%s", (_name, raw, type, channel, expected) => {
    expect(resolveResetPolicy(session(raw), type, channel)).toEqual(expected);
  });

  it("out-of-range hours and minutes are config errors, not clamped", () => {
    expect(() => session({ reset: { atHour: 30 } })).toThrow(/invalid/);
    expect(() => session({ reset: { mode: "idle", idleMinutes: 0.5 } })).toThrow(/invalid/);
  });
});

describe("resetTypeOf", () => {
  it.each([
    ["group", "agent:main:telegram:group:1", "group"],
    ["forum topic", "agent:main:telegram:group:1:topic:2", "thread"],
    ["main", "agent:main:main", "dm"],
    ["DM thread", "agent:main:main:thread:7", "thread"],
    ["guild channel", "agent:main:discord:channel:c1", "group"],
    ["per-channel DM", "agent:main:telegram:dm:42", "dm"],
  ])("%s", (_name, k, expected) => {
    expect(resetTypeOf(key(k))).toBe(expected);
  });

  it("treats a Discord thread the caller flags as a thread", () => {
    expect(resetTypeOf(key("agent:main:discord:channel:t1"), { isThread: true })).toBe("thread");
  });
});
