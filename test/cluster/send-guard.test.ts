// The paused-owner send guard (src/cluster/send-guard.ts) on an injected monotonic clock: a young
// renewal lets a send go with no round trip; an old one must be proved by a renewal now, or nothing is sent.
import { describe, expect, it } from "vitest";
import { createSendGuard } from "../../src/cluster/send-guard.js";
import { DeliveryError } from "../../src/errors.js";

/** A guard over a lease renewed at `renewedAt` on a clock the test moves; `renewal` is what renewing now does. */
function guarded(renewal: (state: { renewedAt: number | undefined; now: number }) => boolean) {
  const state = { renewedAt: 0 as number | undefined, now: 0, renewals: 0, lost: 0 };
  const mayStillSend = createSendGuard({
    renewedAt: () => state.renewedAt,
    renewNow: async () => {
      state.renewals++;
      return renewal(state);
    },
    leaseTtlMs: 10_000,
    onLost: () => state.lost++,
    clock: () => state.now,
  });
  return { state, mayStillSend };
}

describe("the paused-owner send guard", () => {
  it("lets a send go while the last renewal is younger than 80% of the TTL, with no round trip", async () => {
    const { state, mayStillSend } = guarded(() => true);
    state.now = 7_999;
    expect(await mayStillSend()).toBe(true);
    expect([state.renewals, state.lost]).toEqual([0, 0]);
  });

  it("sends nothing and stops once a paused owner continues past its TTL and its lease was taken over", async () => {
    const { state, mayStillSend } = guarded(() => false); // the renewal's answer lacks the lease: a peer took it
    state.now = 20_000; // SIGSTOPped for 20 s
    expect(await mayStillSend()).toBe(false);
    expect([state.renewals, state.lost]).toEqual([1, 1]);
  });

  it("sends after a pause when a renewal now proves the lease is still its own (nobody took it over)", async () => {
    const { state, mayStillSend } = guarded((s) => {
      s.renewedAt = s.now;
      return true;
    });
    state.now = 20_000;
    expect(await mayStillSend()).toBe(true);
    expect([state.renewals, state.lost]).toEqual([1, 0]);
  });

  it("holds the send for a retry when the database cannot confirm the lease, without stopping", async () => {
    const { state, mayStillSend } = createFailingGuard();
    state.now = 9_000;
    const refused = await mayStillSend().catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DeliveryError);
    expect(refused).toMatchObject({ retryable: true, reason: "lease_unconfirmed" });
    expect(state.lost).toBe(0);
  });

  it("makes one renewal for many sends that find the lease old at once (after SIGCONT), and a new one for a later check", async () => {
    let answer = () => {};
    const state = { renewedAt: 0, now: 20_000, renewals: 0, lost: 0 };
    const mayStillSend = createSendGuard({
      renewedAt: () => state.renewedAt,
      // One heartbeat statement: it answers only when the test says so, so every check is in flight at once.
      renewNow: async () => {
        state.renewals++;
        const renewedAt = state.now;
        await new Promise<void>((resolve) => (answer = resolve));
        state.renewedAt = renewedAt;
        return true;
      },
      leaseTtlMs: 10_000,
      onLost: () => state.lost++,
      clock: () => state.now,
    });
    const checks = Array.from({ length: 5 }, () => mayStillSend());
    await Promise.resolve();
    answer();
    const answers = await Promise.all(checks);
    expect(answers).toEqual([true, true, true, true, true]);
    expect([state.renewals, state.lost]).toEqual([1, 0]);
    state.now = 40_000;
    const later = mayStillSend();
    await Promise.resolve();
    answer();
    expect(await later).toBe(true);
    expect(state.renewals).toBe(2);
  });

  it("sends nothing for a lease it no longer holds", async () => {
    const { state, mayStillSend } = guarded(() => true);
    state.renewedAt = undefined;
    expect(await mayStillSend()).toBe(false);
    expect([state.renewals, state.lost]).toEqual([0, 1]);
  });
});

/** A guard whose renewal fails as an unreachable database does. */
function createFailingGuard() {
  return guarded(() => {
    throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
  });
}
