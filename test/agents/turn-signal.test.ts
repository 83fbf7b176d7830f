import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { turnSignal } from "../../src/agents/turn-signal.js";

describe("turnSignal", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("aborts with the run's reason when the run is stopped", () => {
    const stop = new AbortController();
    const running = turnSignal(stop.signal, 60_000);
    const reason = new Error("aborted");
    stop.abort(reason);
    expect(running.signal.aborted).toBe(true);
    expect(running.signal.reason).toBe(reason);
    expect(running.timedOut()).toBe(false);
  });

  it("starts aborted when the run was stopped already", () => {
    const stop = new AbortController();
    stop.abort(new Error("aborted"));
    expect(turnSignal(stop.signal, 60_000).signal.aborted).toBe(true);
  });

  it("aborts with a TimeoutError once the deadline passes, and says it timed out", () => {
    const running = turnSignal(new AbortController().signal, 1_000);
    vi.advanceTimersByTime(999);
    expect(running.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(running.signal.aborted).toBe(true);
    expect(running.signal.reason).toMatchObject({ name: "TimeoutError" });
    expect(running.timedOut()).toBe(true);
  });

  it("neither times out nor follows the run once disposed", () => {
    const stop = new AbortController();
    const running = turnSignal(stop.signal, 1_000);
    running.dispose();
    vi.advanceTimersByTime(5_000);
    stop.abort(new Error("aborted"));
    expect(running.signal.aborted).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("takes a deadline longer than a Node timer can hold (models.timeoutSeconds of 30 days) as the longest one, not as 1 ms", () => {
    const running = turnSignal(new AbortController().signal, 30 * 24 * 3_600_000);
    vi.advanceTimersByTime(24 * 24 * 3_600_000);
    expect(running.signal.aborted).toBe(false);
    running.dispose();
  });
});
