// The sender's side of the lane claims without a database (src/cluster/lane-claims.ts): claims
// asked while a statement is out go together in the next one, and a claim is good for a send only
// while it is young, counted from before its statement went out. Releases (many mode) go in one
// statement for the lanes emptied together, never for a lane a claim is asked for, and a claim
// asked after a release reaches the database after it.
import { describe, expect, it } from "vitest";
import type { LaneClaim } from "../../src/cluster/lane-claim-sql.js";
import { createLaneClaims } from "../../src/cluster/lane-claims.js";
import { until } from "../support/gateway-child.js";

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

  it("releases the lanes emptied together in one statement; a lane asked for again claims anew, after that statement", async () => {
    const manual = manualClaims();
    const released: (readonly string[] | "all")[] = [];
    let answerRelease = () => {};
    const holdsLane = createLaneClaims({
      claim: (lanes, sessions) => manual.claim(lanes, sessions),
      release: (lanes) =>
        new Promise<void>((resolve) => {
          released.push(lanes);
          answerRelease = resolve;
        }),
      leaseTtlMs: TTL,
    });
    const asked = [holdsLane("lane-a", "s1"), holdsLane("lane-b", "s2")];
    await manual.sent(1);
    manual.statements[0]!.answer(["lane-a", "lane-b"]);
    expect(await Promise.all(asked)).toEqual([true, true]);
    // Never held here: nothing to release.
    holdsLane.release("lane-z");
    holdsLane.release("lane-a");
    holdsLane.release("lane-b");
    await until(() => released.length === 1);
    expect(released).toEqual([["lane-a", "lane-b"]]);
    // Asked while the release is out: no longer young, so a claim, sent once the release is done.
    const again = holdsLane("lane-a", "s1");
    await Promise.resolve();
    expect(manual.statements).toHaveLength(1);
    answerRelease();
    await manual.sent(2);
    manual.statements[1]!.answer(["lane-a"]);
    expect(await again).toBe(true);
  });

  it("releases no lane a claim is asked for or out on; releaseAll forgets every claim, and one out at that moment keeps nothing", async () => {
    const manual = manualClaims();
    const released: (readonly string[] | "all")[] = [];
    const holdsLane = createLaneClaims({
      claim: (lanes, sessions) => manual.claim(lanes, sessions),
      release: async (lanes) => void released.push(lanes),
      leaseTtlMs: TTL,
    });
    const first = holdsLane("lane-a", "s1");
    await manual.sent(1);
    manual.statements[0]!.answer(["lane-a"]);
    expect(await first).toBe(true);
    // Released, then asked for again in the same tick: the send wins, the release is dropped.
    holdsLane.release("lane-a");
    const renewed = holdsLane("lane-a", "s1");
    await manual.sent(2);
    // Out now: a release asked meanwhile is dropped too.
    holdsLane.release("lane-a");
    manual.statements[1]!.answer(["lane-a"]);
    expect(await renewed).toBe(true);
    expect(released).toEqual([]);
    // A claim out while the core stops: its answer keeps nothing; every lane released in one statement.
    const late = holdsLane("lane-b", "s2");
    await manual.sent(3);
    const stopped = holdsLane.releaseAll();
    manual.statements[2]!.answer(["lane-b"]);
    expect(await late).toBe(false);
    await stopped;
    expect(released).toEqual(["all"]);
    // Forgotten: the next ask claims again.
    const after = holdsLane("lane-a", "s1");
    await manual.sent(4);
    manual.statements[3]!.answer(["lane-a"]);
    expect(await after).toBe(true);
  });
});
