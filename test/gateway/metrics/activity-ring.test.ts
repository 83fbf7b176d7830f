import { describe, expect, it } from "vitest";
import { createActivityRing } from "../../../src/gateway/metrics/activity-ring.js";
import { createManualClock } from "../../fakes/manual-clock.js";

const MINUTE = 60_000;

describe("createActivityRing", () => {
  it("counts messages and turns per minute, the current minute last, 60 minutes in all", () => {
    const clock = createManualClock(100 * MINUTE);
    const ring = createActivityRing(clock.now);
    ring.message();
    ring.message();
    ring.turn();
    clock.advance(MINUTE);
    ring.message();
    const series = ring.series();
    expect(series).toHaveLength(60);
    expect(series.at(-1)).toEqual({ at: 101 * MINUTE, messages: 1, turns: 0 });
    expect(series.at(-2)).toEqual({ at: 100 * MINUTE, messages: 2, turns: 1 });
    expect(series[0]!.at).toBe(42 * MINUTE);
    expect(series.slice(0, -2).every((m) => m.messages === 0 && m.turns === 0)).toBe(true);
  });

  it("forgets a minute once it is more than an hour old, also when nothing happened since", () => {
    const clock = createManualClock(100 * MINUTE);
    const ring = createActivityRing(clock.now);
    ring.message();
    clock.advance(59 * MINUTE);
    expect(ring.series()[0]).toEqual({ at: 100 * MINUTE, messages: 1, turns: 0 });
    clock.advance(MINUTE);
    expect(ring.series().reduce((sum, m) => sum + m.messages, 0)).toBe(0);
    // The slot the old minute used is reused by the new one, starting from zero.
    ring.turn();
    expect(ring.series().at(-1)).toEqual({ at: 160 * MINUTE, messages: 0, turns: 1 });
  });
});
