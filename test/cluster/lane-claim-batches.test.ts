// The sender's side of the lane claims without a database (src/cluster/lane-claims.ts): claims
// asked while a statement is out go together in the next one, and a claim is good for a send only
// while it is young, counted from before its statement went out.
import { describe, expect, it } from "vitest";
import type { LaneClaim } from "../../src/cluster/lane-claim-sql.js";
import { createLaneClaims } from "../../src/cluster/lane-claims.js";

const TTL = 15_000;

/** A claim statement the test answers by hand: each call waits until `answer` is called for it. */
function manualClaims() {
  const statements: { lanes: readonly string[]; sessions: readonly string[]; answer(held: string[]): void }[] = [];
  const waiters: (() => void)[] = [];
  return {
    statements,
    /** resolves once `count` statements went out */
    sent: (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => (statements.length >= count ? resolve() : waiters.push(check));
        check();
      }),
    claim(lanes: readonly string[], sessions: readonly string[]) {
      return new Promise<LaneClaim[]>((resolve) => {
        statements.push({ lanes, sessions, answer: (held) => resolve(held.map((lane) => ({ lane, fence: 1 }))) });
        for (const waiter of waiters.splice(0)) waiter();
      });
    },
  };
}

describe("lane claims in memory", () => {
  it("sends the claims asked while a statement is out together in the next one", async () => {
    const manual = manualClaims();
    const holdsLane = createLaneClaims({ claim: (lanes, sessions) => manual.claim(lanes, sessions), leaseTtlMs: TTL });
    const first = holdsLane("lane-a", "s1");
    await manual.sent(1);
    // Asked while the first statement is out: they wait for it, then go in one statement.
    const later = [holdsLane("lane-b", "s2"), holdsLane("lane-c", "s3"), holdsLane("lane-b", "s4")];
    manual.statements[0]!.answer(["lane-a"]);
    expect(await first).toBe(true);
    await manual.sent(2);
    expect(manual.statements.map((s) => [s.lanes, s.sessions])).toEqual([
      [["lane-a"], ["s1"]],
      [
        ["lane-b", "lane-c"],
        ["s2", "s4", "s3"],
      ],
    ]);
    // lane-c is another gateway's.
    manual.statements[1]!.answer(["lane-b"]);
    expect(await Promise.all(later)).toEqual([true, false, true]);
  });

  it("answers false when the claim statement took 80% of the TTL or more: the claim may run out before the send", async () => {
    let now = 0;
    const manual = manualClaims();
    const holdsLane = createLaneClaims({
      claim: (lanes, sessions) => manual.claim(lanes, sessions),
      leaseTtlMs: TTL,
      clock: () => now,
    });
    const slow = holdsLane("lane-a", "s1");
    await manual.sent(1);
    // The statement waited out an outage: answered 12 s after it went out.
    now = TTL * 0.8;
    manual.statements[0]!.answer(["lane-a"]);
    expect(await slow).toBe(false);
    // Asked again: a new statement, answered at once, gives a young claim.
    const again = holdsLane("lane-a", "s1");
    await manual.sent(2);
    manual.statements[1]!.answer(["lane-a"]);
    expect(await again).toBe(true);
    // Young: no statement.
    now += TTL * 0.79;
    expect(await holdsLane("lane-a", "s1")).toBe(true);
    expect(manual.statements).toHaveLength(2);
  });
});
