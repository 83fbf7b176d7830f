import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY } from "../../src/config/channel-table.js";
import { retryDelay } from "../../src/delivery/retry-delay.js";

describe("retryDelay", () => {
  it("doubles from minDelayMs up to maxDelayMs", () => {
    const top = () => 1;
    expect([1, 2, 3, 4, 8, 20].map((n) => retryDelay(n, DEFAULT_RETRY, undefined, top))).toEqual([
      500, 1000, 2000, 4000, 30_000, 30_000,
    ]);
  });

  it("jitters within the upper half of the backoff", () => {
    expect(retryDelay(3, DEFAULT_RETRY, undefined, () => 0)).toBe(1000);
    expect(retryDelay(3, DEFAULT_RETRY, undefined, () => 0.5)).toBe(1500);
  });

  it("never waits less than the platform's retryAfterMs, even past maxDelayMs", () => {
    expect(retryDelay(1, DEFAULT_RETRY, 12_000, () => 1)).toBe(12_000);
    expect(retryDelay(1, DEFAULT_RETRY, 90_000, () => 1)).toBe(90_000);
    expect(retryDelay(4, DEFAULT_RETRY, 100, () => 1)).toBe(4000);
  });
});
