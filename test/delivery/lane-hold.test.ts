// The delivery gate asks, before every chunk, whether this gateway holds the chunk's lane (on
// PostgreSQL the owner's lane claims, src/cluster/lane-claims.ts). A lane another gateway took
// leaves the rest of the reply unsent and unclaimed, with its progress kept, for that gateway.
// The gate tells when a lane's queue emptied (many mode releases the lane's claim then).
import { describe, expect, it } from "vitest";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { readStateFile } from "../support/read-state-file.js";
import { request, setupGate } from "../support/setup-gate.js";

/** Three chunks of at most 12 characters, in this order. */
const LONG = "first chunk second chunk third chunk";

describe("a delivery gate with lane claims", () => {
  it("sends nothing more of a multi-chunk reply once its lane is another gateway's: the progress stays for the new holder", async () => {
    const asked: string[] = [];
    let mine = true;
    const adapter = createFakeChannelAdapter({ id: "telegram", maxTextLength: 12 });
    const { gate, outbox, clock } = await setupGate({
      adapter,
      retry: { minDelayMs: 500 },
      holdsLane: async (lane, sessionKey) => {
        asked.push(`${lane} ${sessionKey}`);
        // Asked before each chunk's claim and again right before its send: the lane is taken over
        // after the first chunk went out.
        if (asked.length === 3) mine = false;
        return mine;
      },
    });
    const result = await gate.deliver(request({ text: LONG }));
    expect(result.status).toBe("queued");
    expect(adapter.texts()).toEqual(["first chunk"]);
    expect(asked).toEqual(Array(3).fill("telegram|42|| agent:main:telegram:dm:42"));
    // Not claimed, no attempt counted: the new holder resumes at the second chunk.
    const left = outbox.get("reply:1")!;
    expect(left).toMatchObject({ status: "pending", sent: 1, attempts: 0, messageIds: ["telegram-1"] });
    expect(left.sending).toBeUndefined();
    expect(left.nextAttemptAt).toBe(clock.now() + 500);

    // Still another's when the wait is over: asked again, nothing sent.
    clock.advance(500);
    await gate.idle();
    expect([asked.length, adapter.texts()]).toEqual([4, ["first chunk"]]);

    // Back with this gateway: the rest goes, in order, each chunk once.
    mine = true;
    clock.advance(500);
    await gate.idle();
    expect(adapter.texts()).toEqual(["first chunk", "second chunk", "third chunk"]);
    expect(outbox.get("reply:1")).toMatchObject({ status: "delivered", attempts: 0 });
  });

  it("sends nothing to a lane lost between the lane check before the chunk's claim and the platform call: the chunk's claim is released", async () => {
    let asked = 0;
    const adapter = createFakeChannelAdapter({ id: "telegram", maxTextLength: 100 });
    const { gate, outbox } = await setupGate({
      adapter,
      retry: { minDelayMs: 500 },
      // Held when asked before the chunk's claim; lost by the time the platform call is due (a stall
      // in the claim's write or in the wait for the turn's own writes let the claim run out).
      holdsLane: async () => ++asked === 1,
    });
    let release!: () => void;
    const after = new Promise<void>((resolve) => {
      release = resolve;
    });
    const delivering = gate.deliver(request({ text: "hello", after }));
    release();
    await delivering;
    expect(adapter.texts()).toEqual([]);
    expect(asked).toBe(2);
    // Released unsent, no attempt counted: the lane's holder (or this gateway, once it holds it) sends it.
    expect(outbox.get("reply:1")).toMatchObject({ status: "pending", sent: 0, attempts: 0 });
    expect(outbox.get("reply:1")!.sending).toBeUndefined();
  });

  it("puts an earlier process's marker back when the lane is lost right before the resend: the resend still warns", async () => {
    // A process died during a chunk's send: its `sending` marker is on disk.
    const first = await setupGate({ disk: true });
    const release = first.adapter.hold();
    void first.gate.deliver(request({ text: "in flight" }));
    await expect.poll(async () => (await readStateFile(first.file))["reply:1"]?.sending).toMatchObject({ index: 0 });
    const marker = (await readStateFile(first.file))["reply:1"]!.sending;
    // Restarted: the lane is held before the chunk's claim, lost right before the resend.
    let asked = 0;
    const restarted = await setupGate({
      file: first.file,
      retry: { minDelayMs: 500 },
      holdsLane: async () => ++asked !== 2,
    });
    await expect.poll(() => asked).toBe(2);
    await restarted.gate.idle();
    expect(restarted.adapter.texts()).toEqual([]);
    expect(restarted.outbox.get("reply:1")!.sending).toEqual(marker);
    // Held again: resent once, with the warning that it may arrive twice.
    restarted.clock.advance(500);
    await restarted.gate.idle();
    expect(restarted.adapter.texts()).toEqual(["in flight"]);
    expect(restarted.logger.records).toContainEqual(
      expect.objectContaining({ level: "warn", message: expect.stringContaining("it may arrive twice") }),
    );
    release();
  });

  it("tells that a lane's queue emptied once its last pending message went, not while one waits for its retry or another is queued behind a send", async () => {
    const emptied: string[] = [];
    const adapter = createFakeChannelAdapter({ id: "telegram", maxTextLength: 100 });
    const { gate, clock } = await setupGate({
      adapter,
      retry: { minDelayMs: 500 },
      holdsLane: async () => true,
      laneEmptied: (lane) => void emptied.push(lane),
    });
    adapter.failNext(1);
    expect((await gate.deliver(request())).status).toBe("queued");
    await gate.idle();
    expect(emptied).toEqual([]);
    // Two more queued behind the retry: the lane empties once, after the last of the three.
    const later = [
      gate.deliver(request({ idempotencyKey: "reply:2" })),
      gate.deliver(request({ idempotencyKey: "reply:3" })),
    ];
    clock.advance(500);
    await Promise.all(later);
    await gate.idle();
    expect(adapter.texts()).toEqual(["hello", "hello", "hello"]);
    expect(emptied).toEqual(["telegram|42||"]);
  });
});
