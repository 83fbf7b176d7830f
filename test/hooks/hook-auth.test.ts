import type http from "node:http";
import { describe, expect, it } from "vitest";
import { createAuthLimiter, hookTokenMatches, presentedToken } from "../../src/hooks/hook-auth.js";
import { createManualClock } from "../fakes/manual-clock.js";

const request = (headers: Record<string, string>) => ({ headers }) as unknown as http.IncomingMessage;

describe("presentedToken", () => {
  it.each([
    [{ authorization: "Bearer abc" }, "abc"],
    [{ authorization: "bearer abc" }, "abc"],
    [{ authorization: "BEARER  abc " }, "abc"],
    [{ "x-switchboard-token": " abc " }, "abc"],
    [{ authorization: "Basic abc" }, undefined],
    [{}, undefined],
  ])("reads %j", (headers, token) => {
    expect(presentedToken(request(headers))).toBe(token);
  });
});

describe("hookTokenMatches", () => {
  it("matches only the exact token", () => {
    expect(hookTokenMatches("hook-token-0123456789", "hook-token-0123456789")).toBe(true);
    expect(hookTokenMatches("hook-token-0123456789", "hook-token-012345678")).toBe(false);
    expect(hookTokenMatches("hook-token-0123456789", "")).toBe(false);
    expect(hookTokenMatches("hook-token-0123456789", undefined)).toBe(false);
  });
});

describe("createAuthLimiter", () => {
  it("limits a client after 5 failures until its minute is over, and leaves other clients alone", () => {
    const clock = createManualClock();
    const limiter = createAuthLimiter({ now: clock.now });
    for (let i = 0; i < 4; i++) limiter.fail("10.0.0.1");
    expect(limiter.retryAfterSeconds("10.0.0.1")).toBe(0);
    clock.advance(20_000);
    limiter.fail("10.0.0.1");
    expect(limiter.retryAfterSeconds("10.0.0.1")).toBe(40);
    expect(limiter.retryAfterSeconds("10.0.0.2")).toBe(0);
    clock.advance(40_000);
    expect(limiter.retryAfterSeconds("10.0.0.1")).toBe(0);
  });

  it("forgets a client's failures after it authenticates", () => {
    const limiter = createAuthLimiter({ now: () => 0 });
    for (let i = 0; i < 4; i++) limiter.fail("a");
    limiter.succeed("a");
    limiter.fail("a");
    expect(limiter.retryAfterSeconds("a")).toBe(0);
  });

  it("locks a client out for lockoutMs from the failure that crossed the limit", () => {
    const clock = createManualClock();
    const limiter = createAuthLimiter({ now: clock.now, maxFailures: 10, windowMs: 60_000, lockoutMs: 300_000 });
    for (let i = 0; i < 9; i++) limiter.fail("10.0.0.1");
    expect(limiter.retryAfterSeconds("10.0.0.1")).toBe(0);
    clock.advance(30_000);
    limiter.fail("10.0.0.1");
    expect(limiter.retryAfterSeconds("10.0.0.1")).toBe(300);
    clock.advance(299_000);
    expect(limiter.retryAfterSeconds("10.0.0.1")).toBe(1);
    clock.advance(1_000);
    expect(limiter.retryAfterSeconds("10.0.0.1")).toBe(0);
  });

  it("starts counting again once a window passes without reaching the limit", () => {
    const clock = createManualClock();
    const limiter = createAuthLimiter({ now: clock.now, maxFailures: 10, lockoutMs: 300_000 });
    for (let i = 0; i < 9; i++) limiter.fail("a");
    clock.advance(60_000);
    limiter.fail("a");
    expect(limiter.retryAfterSeconds("a")).toBe(0);
  });
});
