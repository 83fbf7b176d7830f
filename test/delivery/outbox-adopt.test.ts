// The outbox and the delivery gate on a state port whose partitions change while it runs
// (docs/scale-out.md "Partitions adopted and evicted one by one"): adopted items are indexed and sent
// after `pump()`; before an eviction `leave` lets the sends in flight finish and starts no other;
// evicted items are forgotten, and a lane their eviction emptied is released (`laneEmptied`).
import { describe, expect, it } from "vitest";
import type { DeliveryRequest } from "../../src/delivery/delivery-request.js";
import { type NewOutboxItem, createOutbox } from "../../src/delivery/outbox.js";
import { parseSessionKey } from "../../src/routing/parse-session-key.js";
import { partOf } from "../../src/routing/partition.js";
import { type MemoryStateData, openMemoryState } from "../../src/state/memory-state.js";
import type { ManualClock } from "../fakes/manual-clock.js";
import { request, setupGate } from "../support/setup-gate.js";

const FILE = "/outbox-adopt/state/outbox.json";
const of = (sessionKey: string) => partOf(sessionKey, 16);
/** a session of partition A, held by the gateway under test from the start */
const MINE = "agent:main:telegram:dm:42";
/** a session of partition B: adopted or evicted */
const THEIRS = "agent:main:telegram:dm:43";
const A = of(MINE);
const B = of(THEIRS);
const inB = (sessionKey: string) => of(sessionKey) === B;

/** A message of `sessionKey` to Telegram chat `to` (default 42), its text its idempotency key. */
const from = (sessionKey: string, key: string, to = "42"): DeliveryRequest =>
  request({
    sessionKey: parseSessionKey(sessionKey)!,
    idempotencyKey: key,
    text: key,
    target: { channel: "telegram", to },
  });

/** The same message as another gateway's outbox item. */
const itemOf = (sessionKey: string, id: string, to = "42"): NewOutboxItem => ({
  id,
  sessionKey,
  target: { channel: "telegram", to },
  kind: "reply",
  chunks: [id],
});

/** A gate whose outbox is on a memory port holding `held` of 16 partitions, over `data`. */
async function partedGate(
  held: number[],
  options: { data?: MemoryStateData; laneEmptied?: (lane: string) => void } = {},
) {
  expect(A).not.toBe(B);
  const data = options.data ?? new Map();
  const port = openMemoryState({ data, parts: { of, held } });
  const setup = await setupGate({ state: port, file: FILE, retry: { minDelayMs: 500 }, ...options });
  return { ...setup, data, parted: port.parted! };
}

/** The outbox of another gateway holding `held` over the same data. */
const outboxOn = (data: MemoryStateData, held: number[], clock: ManualClock) =>
  createOutbox({
    state: openMemoryState({ data, parts: { of, held } }),
    path: FILE,
    now: clock.now,
  });

describe("the outbox and the delivery gate on a parted state port", () => {
  it("indexes adopted items as pending and sends them after pump(), in order, behind this gateway's own to the same chat", async () => {
    const data: MemoryStateData = new Map();
    const { gate, outbox, adapter, clock, parted } = await partedGate([A], { data });
    // Two messages to chat 8 go out first: this gateway's `seq` runs ahead of the other's.
    for (const key of ["mine:a", "mine:b"]) expect((await gate.deliver(from(MINE, key, "8"))).status).toBe("delivered");
    // This gateway's own message to chat 42 waits for its retry.
    adapter.failNext(1);
    expect((await gate.deliver(from(MINE, "mine:1"))).status).toBe("queued");
    const other = await outboxOn(data, [B], clock);
    await other.enqueue(itemOf(THEIRS, "theirs:0"));
    await other.update("theirs:0", { sent: 1, status: "delivered", deliveredAt: clock.now() });
    for (const id of ["theirs:1", "theirs:2"]) await other.enqueue(itemOf(THEIRS, id));
    await other.enqueue(itemOf(THEIRS, "theirs:3", "43"));
    expect(gate.pendingItems(THEIRS)).toEqual([]);

    await parted.adopt([B]);
    expect(gate.pendingItems(THEIRS).map((item) => item.id)).toEqual(["theirs:1", "theirs:2", "theirs:3"]);
    gate.pump();
    await gate.idle();
    // Chat 42's adopted messages wait behind this gateway's own, though their `seq` is lower.
    expect(outbox.get("theirs:1")!.seq).toBeLessThan(outbox.get("mine:1")!.seq);
    expect(adapter.texts().slice(2)).toEqual(["theirs:3"]);
    clock.advance(500);
    await gate.idle();
    expect(adapter.texts().slice(2)).toEqual(["theirs:3", "mine:1", "theirs:1", "theirs:2"]);
    expect(gate.pending()).toBe(0);
    // The adopted delivered item's key is known: the same request sends nothing again.
    expect((await gate.deliver(from(THEIRS, "theirs:0"))).status).toBe("delivered");
    expect(adapter.texts()).toHaveLength(6);
    expect(outbox.get("theirs:0")).toMatchObject({ status: "delivered", messageIds: [] });
  });

  it("forgets evicted items: neither pending nor attempted past their retry; the next holder finds them as they were", async () => {
    const { gate, adapter, clock, parted, data } = await partedGate([A, B]);
    adapter.failNext(2);
    expect((await gate.deliver(from(THEIRS, "theirs:1"))).status).toBe("queued");
    expect((await gate.deliver(from(MINE, "mine:1", "7"))).status).toBe("queued");

    await gate.leave(inB);
    await parted.evict([B]);
    expect(gate.pendingItems().map((item) => item.id)).toEqual(["mine:1"]);
    clock.advance(1_000);
    await gate.idle();
    expect(adapter.texts()).toEqual(["mine:1"]);
    expect(adapter.calls.filter((call) => call.message.text === "theirs:1")).toHaveLength(1);
    const next = await outboxOn(data, [B], clock);
    expect(next.pending().map((item) => [item.id, item.attempts])).toEqual([["theirs:1", 1]]);
  });

  it("leave waits for a send in flight, which finishes, and then starts nothing of those sessions: no retry, no first try", async () => {
    const { gate, outbox, adapter, clock } = await partedGate([A, B]);
    adapter.failNext(1);
    expect((await gate.deliver(from(THEIRS, "theirs:1"))).status).toBe("queued");
    const release = adapter.hold();
    const inFlight = gate.deliver(from(THEIRS, "theirs:2", "43"));
    await expect.poll(() => adapter.calls.length).toBe(2);

    // Read when `leave` settles: the send held open had been recorded by then.
    const left = gate.leave(inB).then(() => outbox.get("theirs:2")?.status);
    release();
    expect(await left).toBe("delivered");
    expect((await inFlight).status).toBe("delivered");

    clock.advance(1_000);
    expect((await gate.deliver(from(THEIRS, "theirs:3", "7"))).status).toBe("queued");
    // Other sessions send as before.
    expect((await gate.deliver(from(MINE, "mine:1", "8"))).status).toBe("delivered");
    await gate.idle();
    expect(adapter.texts()).toEqual(["theirs:2", "mine:1"]);
    expect(adapter.calls).toHaveLength(3);
    expect(outbox.get("theirs:1")).toMatchObject({ status: "pending", attempts: 1 });
  });

  it("tells laneEmptied for a lane the eviction emptied, and sends at once what waited behind an evicted message", async () => {
    const emptied: string[] = [];
    const { gate, adapter, parted } = await partedGate([A, B], { laneEmptied: (lane) => void emptied.push(lane) });
    adapter.failNext(2);
    expect((await gate.deliver(from(THEIRS, "theirs:1"))).status).toBe("queued");
    expect((await gate.deliver(from(THEIRS, "theirs:2", "43"))).status).toBe("queued");
    // Another session's message to chat 42 waits behind the retrying one.
    expect((await gate.deliver(from(MINE, "mine:1"))).status).toBe("queued");
    expect(emptied).toEqual([]);

    await gate.leave(inB);
    await parted.evict([B]);
    await gate.idle();
    expect(adapter.texts()).toEqual(["mine:1"]);
    expect(emptied.sort()).toEqual(["telegram|42||", "telegram|43||"]);
  });

  it("ends a leave once its sessions' items left the outbox: adopted back, an item goes at its retry", async () => {
    const { gate, adapter, clock, parted } = await partedGate([A, B]);
    adapter.failNext(1);
    expect((await gate.deliver(from(THEIRS, "theirs:1"))).status).toBe("queued");
    await gate.leave(inB);
    await parted.evict([B]);
    // No pump(): the retry timer set before the eviction finds it.
    await parted.adopt([B]);
    clock.advance(500);
    await gate.idle();
    expect(adapter.texts()).toEqual(["theirs:1"]);
  });

  it("sends again for a session evicted and adopted back: pump() ends the leave even when nothing of it was evicted", async () => {
    const { gate, adapter, parted } = await partedGate([A, B]);
    await gate.leave(inB);
    await parted.evict([B]);
    await parted.adopt([B]);
    gate.pump();
    expect((await gate.deliver(from(THEIRS, "theirs:1"))).status).toBe("delivered");
    expect(adapter.texts()).toEqual(["theirs:1"]);
  });

  it("finishes an item of a held session while a partition is being evicted: the prune skips the evicted partition's finished items, which leave with it", async () => {
    const port = openMemoryState({ parts: { of, held: [A, B] } });
    const outbox = await createOutbox({ state: port, path: FILE, retention: { maxItems: 1 } });
    await outbox.enqueue(itemOf(THEIRS, "theirs-done"));
    await outbox.update("theirs-done", { status: "delivered" });
    await outbox.enqueue(itemOf(MINE, "mine-1"));
    // The evict refuses B's writes at once and takes its rows out once its writer settled.
    const evicting = port.parted!.evict([B]);
    // Finishing mine-1 prunes the oldest finished item over the cap: B's, refused now.
    await expect(outbox.update("mine-1", { status: "delivered" })).resolves.toMatchObject({ status: "delivered" });
    await evicting;
    expect(outbox.get("theirs-done")).toBeUndefined();
    expect(outbox.get("mine-1")).toMatchObject({ status: "delivered" });
  });
});
