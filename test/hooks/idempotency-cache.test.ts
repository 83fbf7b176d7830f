import { describe, expect, it } from "vitest";
import { createIdempotencyCache } from "../../src/hooks/idempotency-cache.js";
import { createManualClock } from "../fakes/manual-clock.js";

describe("createIdempotencyCache", () => {
  it("remembers a key for 24 hours, then forgets it", () => {
    const clock = createManualClock();
    const cache = createIdempotencyCache<string>({ now: clock.now });
    cache.set("deploy-42", "run-1");
    clock.advance(24 * 3_600_000 - 1);
    expect(cache.get("deploy-42")).toBe("run-1");
    clock.advance(1);
    expect(cache.get("deploy-42")).toBeUndefined();
  });

  it("keeps at most `max` keys, dropping the oldest", () => {
    const cache = createIdempotencyCache<number>({ now: () => 0, max: 2 });
    cache.set("a", 1);
    cache.set("b", 2);
    cache.set("c", 3);
    expect([cache.get("a"), cache.get("b"), cache.get("c")]).toEqual([undefined, 2, 3]);
  });
});
