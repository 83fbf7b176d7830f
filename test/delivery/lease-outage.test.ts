import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createSendGuard } from "../../src/cluster/send-guard.js";
import { SessionConfigSchema } from "../../src/config/schema/session.js";
import { createDeliveryGate } from "../../src/delivery/delivery-gate.js";
import { createOutbox } from "../../src/delivery/outbox.js";
import { createMemoryLogger } from "../../src/logger.js";
import { parseSessionKey } from "../../src/routing/parse-session-key.js";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { createManualClock } from "../fakes/manual-clock.js";
import { onMemoryState } from "../support/memory-state.js";

/** A gate whose sends pass the real send guard; `database.up` says whether a lease renewal answers. */
async function guardedGate(retry: { attempts?: number; minDelayMs: number; maxDelayMs: number; maxAgeMs: number }) {
  const clock = createManualClock();
  const logger = createMemoryLogger();
  const adapter = createFakeChannelAdapter({ id: "telegram", maxTextLength: 4000 });
  const file = path.join(await mkdtemp(path.join(os.tmpdir(), "sb-lease-")), "outbox.json");
  const outbox = await createOutbox(onMemoryState({ path: file, logger, now: clock.now }, file));
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
  const policy = SessionConfigSchema.shape.sendPolicy.parse({});
  const gate = createDeliveryGate({
    adapters: (channel) => (channel === adapter.id ? adapter : undefined),
    outbox,
    policy: () => policy,
    logger,
    now: clock.now,
    timers: clock.timers,
    random: () => 1,
    retry,
    mayStillSend,
  });
  gate.start();
  return { clock, adapter, outbox, gate, database };
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
