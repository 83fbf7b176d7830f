import { describe, expect, it } from "vitest";
import { createSendGuard } from "../../src/cluster/send-guard.js";
import { parseSessionKey } from "../../src/routing/parse-session-key.js";
import { createManualClock } from "../fakes/manual-clock.js";
import { setupGate } from "../support/setup-gate.js";

/** A gate whose sends pass the real send guard; `database.up` says whether a lease renewal answers. */
async function guardedGate(retry: { attempts?: number; minDelayMs: number; maxDelayMs: number; maxAgeMs: number }) {
  const clock = createManualClock();
  const database = { up: false, renewals: 0, lost: 0 };
  let renewedAt = clock.now() - 60_000; // stale: every send asks the database
  const mayStillSend = createSendGuard({
    renewedAt: () => renewedAt,
    renewNow: async () => {
      database.renewals++;
      if (!database.up) throw new Error("connect ECONNREFUSED 127.0.0.1:5432");
      renewedAt = clock.now();
      return true;
    },
    leaseTtlMs: 15_000,
    onLost: () => database.lost++,
    clock: clock.now,
  });
  return { ...(await setupGate({ clock, retry, mayStillSend })), database };
}

describe("a database outage under the send guard", () => {
  it("holds a reply through an outage longer than maxAgeMs and the attempts cap, counting no attempt, and sends it once the lease is confirmed", async () => {
    const { clock, adapter, outbox, gate, database } = await guardedGate({
      attempts: 3,
      minDelayMs: 100,
      maxDelayMs: 1_000,
      maxAgeMs: 10_000,
    });
    const result = await gate.deliver({
      sessionKey: parseSessionKey("agent:main:telegram:dm:42")!,
      target: { channel: "telegram", to: "42" },
      text: "hello",
      kind: "reply",
      idempotencyKey: "reply:1",
    });
    expect(result.status).toBe("queued");
    // A minute of outage: six times maxAgeMs, hundreds of guard refusals.
    for (let waited = 0; waited < 60_000; waited += 500) {
      clock.advance(500);
      await gate.idle();
    }
    expect(database.renewals).toBeGreaterThan(3);
    expect(adapter.calls).toEqual([]);
    expect(gate.failures()).toEqual([]);
    expect(outbox.get("reply:1")).toMatchObject({ status: "pending", attempts: 0 });
    database.up = true;
    clock.advance(500);
    await gate.idle();
    expect(adapter.texts()).toEqual(["hello"]);
    expect(outbox.get("reply:1")).toMatchObject({ status: "delivered", attempts: 0 });
    expect(database.lost).toBe(0);
  });
});
