import { DEFAULT_RETRY } from "../../src/config/channel-table.js";
import { describe, expect, it } from "vitest";
import type { DeliveryGateDeps } from "../../src/delivery/delivery-gate.js";
import { parseSessionKey } from "../../src/routing/parse-session-key.js";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { createManualClock } from "../fakes/manual-clock.js";
import { readStateFile } from "../support/read-state-file.js";
import { request, setupGate } from "../support/setup-gate.js";

describe("createDeliveryGate", () => {
  it("sends nothing for a denied session and logs an audit line", async () => {
    const { gate, adapter, logger, outbox } = await setupGate({
      policy: { rules: [{ action: "deny", match: { keyPrefix: "cron:" } }] },
    });
    const result = await gate.deliver(
      request({ sessionKey: parseSessionKey("agent:main:cron:job-1")!, kind: "announce" }),
    );
    expect(result).toEqual({ status: "denied", messageIds: [] });
    expect(adapter.calls).toEqual([]);
    expect(outbox.get("reply:1")).toBeUndefined();
    expect(logger.records).toContainEqual({
      level: "info",
      message: "delivery denied by sendPolicy",
      fields: {
        sessionKey: "agent:main:cron:job-1",
        channel: "telegram",
        to: "42",
        kind: "announce",
        source: "rule",
        ruleIndex: 0,
      },
    });
  });

  it("denies on a /send off override of the session entry", async () => {
    const { gate, adapter } = await setupGate();
    const result = await gate.deliver(request({ entry: { sessionId: "s", updatedAt: 0, sendPolicy: "deny" } }));
    expect(result.status).toBe("denied");
    expect(adapter.calls).toEqual([]);
  });

  it("delivers the reply to an owner's command despite a deny", async () => {
    const { gate, adapter, logger } = await setupGate({ policy: { default: "deny" } });
    const result = await gate.deliver(request({ text: "⚙️ Send policy set to off.", bypassPolicy: true }));
    expect(result).toEqual({ status: "delivered", messageIds: ["telegram-1"] });
    expect(adapter.texts()).toEqual(["⚙️ Send policy set to off."]);
    expect(logger.records.some((r) => r.message.startsWith("sendPolicy deny bypassed"))).toBe(true);
  });

  it("delivers a 5,000-character reply to a 4,000-limit adapter as two messages in order", async () => {
    const { gate, adapter } = await setupGate();
    const text = `${Array.from({ length: 1000 }, (_, i) => `w${String(i).padStart(3, "0")}`).join(" ")}.`;
    expect(text.length).toBe(5000);
    const result = await gate.deliver(request({ text, replyToMessageId: "99" }));
    expect(result.status).toBe("delivered");
    expect(result.messageIds).toEqual(["telegram-1", "telegram-2"]);
    expect(adapter.sent).toHaveLength(2);
    expect(adapter.sent.map((s) => s.message.text.length).every((n) => n <= 4000)).toBe(true);
    expect(adapter.texts().join(" ")).toBe(text);
    // Every piece names the message answered and its place; the adapter's replyToMode decides which quote.
    expect(adapter.sent.map((s) => [s.message.replyToMessageId, s.message.part])).toEqual([
      ["99", { index: 0, count: 2 }],
      ["99", { index: 1, count: 2 }],
    ]);
  });

  it("sends nothing once the owner's send guard refuses (a paused owner past its lease), leaving the chunk claimed for the next owner", async () => {
    let asked = 0;
    const stopped: Array<Promise<void>> = [];
    // As the gateway does: a refusal stops it (here the gate; there the process, as when fenced out).
    const { adapter, gate, outbox } = await setupGate({
      mayStillSend: async () => {
        if (++asked === 1) return true;
        stopped.push(gate.stop());
        return false;
      },
    });
    expect((await gate.deliver(request({ idempotencyKey: "reply:1" }))).status).toBe("delivered");
    const refused = await gate.deliver(request({ idempotencyKey: "reply:2", text: "after the pause" }));
    expect(refused.status).toBe("queued");
    expect([asked, adapter.sent.map((s) => s.message.text)]).toEqual([2, ["hello"]]);
    expect(outbox.get("reply:2")).toMatchObject({ status: "pending", sent: 0, sending: { index: 0 } });
    await Promise.all(stopped);
  });

  it("retries a send that fails twice and delivers it exactly once", async () => {
    const { gate, adapter, clock, outbox } = await setupGate();
    adapter.failNext(2, "retryable");
    const first = await gate.deliver(request());
    expect(first).toMatchObject({ status: "queued", messageIds: [], error: { reason: "network" } });
    expect(gate.pending()).toBe(1);
    clock.advance(500); // first retry after minDelayMs
    await gate.idle();
    expect(adapter.sent).toHaveLength(0);
    clock.advance(1000); // then twice that
    await gate.idle();
    expect(adapter.texts()).toEqual(["hello"]);
    expect(adapter.calls).toHaveLength(3);
    expect(outbox.get("reply:1")).toMatchObject({ status: "delivered", attempts: 2, messageIds: ["telegram-1"] });
    clock.advance(60_000);
    await gate.idle();
    expect(adapter.sent).toHaveLength(1);
    expect(gate.pending()).toBe(0);
  });

  it("waits as long as a rate-limited platform asks", async () => {
    const { gate, adapter, clock } = await setupGate();
    adapter.failNext(1, { retryAfterMs: 10_000 });
    expect((await gate.deliver(request())).error?.reason).toBe("rate_limited");
    clock.advance(9_999);
    await gate.idle();
    expect(adapter.sent).toHaveLength(0);
    clock.advance(1);
    await gate.idle();
    expect(adapter.texts()).toEqual(["hello"]);
  });

  it("records a fatal error at once and reports it in failures()", async () => {
    const { gate, adapter, logger } = await setupGate();
    adapter.failNext(1, "fatal");
    const result = await gate.deliver(request({ kind: "announce", idempotencyKey: "announce:run-1" }));
    expect(result).toEqual({
      status: "failed",
      messageIds: [],
      error: { reason: "chat_not_found", message: "fake: chat not found" },
    });
    expect(adapter.calls).toHaveLength(1);
    expect(gate.failures()).toMatchObject([
      { id: "announce:run-1", kind: "announce", status: "failed", lastError: { reason: "chat_not_found" } },
    ]);
    expect(gate.failures("agent:main:telegram:dm:42")).toHaveLength(1);
    expect(gate.failures("agent:main:main")).toEqual([]);
    expect(logger.records).toContainEqual(expect.objectContaining({ level: "warn", message: "delivery failed" }));
  });

  it("keeps retrying a retryable failure through a long outage and delivers once it is over", async () => {
    const { gate, adapter, clock, outbox } = await setupGate();
    adapter.failNext(40, "retryable");
    await gate.deliver(request());
    // Two hours of outage: the backoff grows to maxDelayMs (30 s) and stays there; the item stays pending.
    for (let waited = 0; waited < 2 * 60 * 60 * 1000; waited += 30_000) {
      clock.advance(30_000);
      await gate.idle();
    }
    expect(adapter.texts()).toEqual(["hello"]);
    expect(outbox.get("reply:1")).toMatchObject({ status: "delivered", attempts: 40 });
    expect(gate.failures()).toEqual([]);
  });

  it("fails a retryable item only once maxAgeMs has passed since it was handed over, trying once more at that deadline", async () => {
    const retry = { minDelayMs: 100, maxDelayMs: 1_000, maxAgeMs: 10_000 };
    const { gate, adapter, clock } = await setupGate({ retry });
    adapter.failNext(1000, "retryable");
    await gate.deliver(request());
    for (let i = 0; i < 9; i++) {
      clock.advance(1_000);
      await gate.idle();
    }
    expect(gate.pending()).toBe(1);
    expect(gate.failures()).toEqual([]);
    const before = adapter.calls.length;
    clock.advance(1_000);
    await gate.idle();
    expect(adapter.calls).toHaveLength(before + 1); // the last try falls on the deadline
    expect(gate.pending()).toBe(0);
    expect(gate.failures()).toMatchObject([
      { status: "failed", lastError: { reason: "network", message: expect.stringContaining("gave up after") } },
    ]);
  });

  it("drains: waits for a retry due before the deadline, not for one due after it", async () => {
    const { gate, adapter, clock } = await setupGate();
    adapter.failNext(1, "retryable");
    await gate.deliver(request({ idempotencyKey: "soon" })); // retried 500 ms later
    let drained: number | undefined;
    const draining = gate.drain(10_000).then((left) => (drained = left));
    clock.advance(500);
    await draining;
    expect(drained).toBe(0);
    expect(adapter.texts()).toEqual(["hello"]);

    adapter.failNext(1, { retryAfterMs: 60_000 });
    await gate.deliver(request({ idempotencyKey: "later" })); // the platform asks for a minute
    expect(await gate.drain(10_000)).toBe(1); // nothing it could send by then: no wait
  });

  it("defaults to 12 hours of retries for every channel", () => {
    expect(DEFAULT_RETRY).toMatchObject({ minDelayMs: 500, maxDelayMs: 30_000, maxAgeMs: 12 * 60 * 60 * 1000 });
    expect(DEFAULT_RETRY.attempts).toBeUndefined();
  });

  it("ends an item at the optional attempts cap of the account the target is sent from", async () => {
    const retryFor: DeliveryGateDeps["retryFor"] = (target) => ({
      ...(target.accountId === "hasty" && { attempts: 1 }),
      minDelayMs: 100,
      maxDelayMs: 100,
      maxAgeMs: 60_000,
    });
    const { gate, adapter, clock } = await setupGate({ retryFor });
    adapter.failNext(4, "retryable");
    await gate.deliver(request({ target: { channel: "telegram", to: "7", accountId: "hasty" }, idempotencyKey: "r2" }));
    await gate.deliver(request({ target: { channel: "telegram", to: "42", accountId: "patient" } }));
    for (let i = 0; i < 5; i++) {
      clock.advance(100);
      await gate.idle();
    }
    const attemptsTo = (to: string) => adapter.calls.filter((call) => call.target.to === to).length;
    expect([attemptsTo("42"), attemptsTo("7")]).toEqual([4, 1]);
    expect(gate.failures().map((item) => item.target.to)).toEqual(["7"]);
    expect(adapter.texts()).toEqual(["hello"]);
  });

  it("holds back only the retrying chat's later messages: other chats are delivered meanwhile, its own in order after", async () => {
    const { gate, adapter, clock } = await setupGate();
    adapter.failNext(1, "retryable");
    await gate.deliver(request({ idempotencyKey: "a1", text: "a1" }));
    await gate.deliver(request({ idempotencyKey: "a2", text: "a2" }));
    await gate.deliver(request({ idempotencyKey: "b1", text: "b1", target: { channel: "telegram", to: "43" } }));
    expect(adapter.texts()).toEqual(["b1"]);
    expect(gate.pending()).toBe(2);
    clock.advance(500);
    await gate.idle();
    expect(adapter.texts()).toEqual(["b1", "a1", "a2"]);
  });

  it("retries an unclassified network error but fails an adapter bug at once", async () => {
    const { gate, adapter } = await setupGate();
    adapter.failNext(1, Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }));
    expect((await gate.deliver(request({ idempotencyKey: "a" }))).status).toBe("queued");
    adapter.failNext(1, new TypeError("cannot read properties of undefined"));
    expect(
      (await gate.deliver(request({ idempotencyKey: "b", target: { channel: "telegram", to: "43" } }))).error,
    ).toEqual({
      reason: "send_error",
      message: "cannot read properties of undefined",
    });
  });

  it("sends once for the same idempotency key given twice", async () => {
    const { gate, adapter } = await setupGate();
    const [a, b] = await Promise.all([
      gate.deliver(request({ text: "announce" })),
      gate.deliver(request({ text: "announce" })),
    ]);
    const c = await gate.deliver(request({ text: "announce" }));
    expect(adapter.texts()).toEqual(["announce"]);
    expect([a, b, c]).toEqual([0, 1, 2].map(() => ({ status: "delivered", messageIds: ["telegram-1"] })));
  });

  it("reports a failed item again for its key instead of sending it anew", async () => {
    const { gate, adapter } = await setupGate();
    adapter.failNext(1, "fatal");
    await gate.deliver(request({ idempotencyKey: "announce:run-9" }));
    expect((await gate.deliver(request({ idempotencyKey: "announce:run-9" }))).status).toBe("failed");
    expect(adapter.calls).toHaveLength(1);
  });

  it("fails and records a message for a channel without an adapter", async () => {
    const { gate } = await setupGate();
    const result = await gate.deliver(request({ target: { channel: "Signal", to: "x" } }));
    expect(result.status).toBe("failed");
    expect(result.error?.reason).toBe("no_adapter");
    expect(result.error?.message).toContain('No adapter for channel "signal"');
    expect(gate.failures()[0]?.target).toEqual({ channel: "signal", to: "x" });
  });

  it("sends only after the request's `after` settles, and never, not even on a later pump, when it rejects", async () => {
    const { gate, adapter, clock, outbox } = await setupGate();
    let store!: () => void;
    const stored = new Promise<void>((resolve) => (store = resolve));
    const first = gate.deliver(request({ after: stored }));
    await expect.poll(() => outbox.get("reply:1")?.sending).toBeDefined();
    expect(adapter.sent).toEqual([]);
    store();
    expect((await first).status).toBe("delivered");
    expect(adapter.texts()).toEqual(["hello"]);

    const notStored = Promise.reject(new Error("disk full"));
    notStored.catch(() => undefined); // as the stores' write promises: a failure nobody awaits yet is not unhandled
    const second = await gate.deliver(request({ idempotencyKey: "reply:2", text: "never", after: notStored }));
    expect(second).toMatchObject({ status: "failed", error: { reason: "not_stored" } });
    clock.advance(3_600_000);
    await gate.idle();
    expect(adapter.texts()).toEqual(["hello"]);
    expect(outbox.get("reply:2")?.status).toBe("failed");
  });

  it("checks `after` also when the item waits behind an earlier message to the same chat and the pump sends it later", async () => {
    const { gate, adapter, clock, outbox } = await setupGate();
    adapter.failNext(1); // the earlier message waits for a retry, so the lane is not free
    const earlier = await gate.deliver(request({ idempotencyKey: "reply:1", text: "earlier" }));
    expect(earlier.status).toBe("queued");
    const notStored = Promise.reject(new Error("disk full"));
    notStored.catch(() => undefined);
    const later = await gate.deliver(request({ idempotencyKey: "reply:2", text: "never", after: notStored }));
    expect(later.status).toBe("queued");
    clock.advance(3_600_000);
    await expect.poll(() => outbox.get("reply:2")?.status).toBe("failed");
    await gate.idle();
    expect(adapter.texts()).toEqual(["earlier"]);
    expect(outbox.get("reply:2")?.lastError?.reason).toBe("not_stored");
  });

  it("keeps messages to one target in order while an earlier one waits for a retry", async () => {
    const { gate, adapter, clock } = await setupGate();
    adapter.failNext(1, "retryable");
    expect((await gate.deliver(request({ idempotencyKey: "1", text: "first" }))).status).toBe("queued");
    expect((await gate.deliver(request({ idempotencyKey: "2", text: "second" }))).status).toBe("queued");
    expect(
      (
        await gate.deliver(
          request({ idempotencyKey: "3", text: "elsewhere", target: { channel: "telegram", to: "7" } }),
        )
      ).status,
    ).toBe("delivered");
    clock.advance(500);
    await gate.idle();
    expect(adapter.texts()).toEqual(["elsewhere", "first", "second"]);
  });

  it("chunks to the adapter's line limit too, closing and reopening a split code block", async () => {
    const adapter = createFakeChannelAdapter({ id: "discord", maxTextLength: 2000, maxLinesPerMessage: 17 });
    const { gate } = await setupGate({ adapter });
    const code = Array.from({ length: 30 }, (_, i) => `print(${i})`);
    await gate.deliver(
      request({ target: { channel: "discord", to: "channel:1" }, text: ["```py", ...code, "```"].join("\n") }),
    );
    const texts = adapter.texts();
    expect(texts.length).toBe(2);
    for (const text of texts) {
      expect(text.split("\n").length).toBeLessThanOrEqual(17);
      expect(text.startsWith("```py\n")).toBe(true);
      expect(text.endsWith("\n```")).toBe(true);
    }
    expect(texts.flatMap((t) => t.split("\n").slice(1, -1))).toEqual(code);
  });

  it("serializes concurrent sends to one target so chunks and messages keep their order", async () => {
    const adapter = createFakeChannelAdapter({ id: "telegram", maxTextLength: 10 });
    const { gate } = await setupGate({ adapter });
    const release = adapter.hold();
    const pending = [
      gate.deliver(request({ idempotencyKey: "1", text: "aaaa bbbb cccc" })),
      gate.deliver(request({ idempotencyKey: "2", text: "dddd" })),
    ];
    await expect.poll(() => adapter.calls.length).toBe(1); // the first chunk is held at the platform
    release();
    await Promise.all(pending);
    expect(adapter.texts()).toEqual(["aaaa bbbb", "cccc", "dddd"]);
  });

  it("resumes a pending item after a restart without resending delivered chunks", async () => {
    const clock = createManualClock();
    const first = await setupGate({
      clock,
      disk: true,
      adapter: createFakeChannelAdapter({ id: "telegram", maxTextLength: 10 }),
    });
    // The first chunk goes out, the second fails and is left for a retry; then the gateway stops.
    first.adapter.failNext(1, "retryable", { after: 1 });
    expect((await first.gate.deliver(request({ text: "part-one part-two" }))).status).toBe("queued");
    await first.gate.stop();
    expect(first.adapter.texts()).toEqual(["part-one"]);
    expect((await readStateFile(first.file))["reply:1"]).toMatchObject({ sent: 1, status: "pending" });

    clock.advance(60_000);
    const second = await setupGate({
      clock,
      file: first.file,
      adapter: createFakeChannelAdapter({ id: "telegram", maxTextLength: 10 }),
    });
    await second.gate.idle();
    expect(second.adapter.texts()).toEqual(["part-two"]);
    expect(second.outbox.get("reply:1")).toMatchObject({
      status: "delivered",
      messageIds: ["telegram-1", "telegram-1"],
    });
    expect((await second.gate.deliver(request({ text: "part-one part-two" }))).status).toBe("delivered");
    expect(second.adapter.sent).toHaveLength(1);
  });

  it("waits for sends in flight on stop and sends nothing more afterwards", async () => {
    const { gate, adapter, clock } = await setupGate();
    const release = adapter.hold();
    const result = gate.deliver(request());
    // In flight: the platform has the send (after the outbox recorded that it started).
    await expect.poll(() => adapter.calls.length).toBe(1);
    let stopped = false;
    const stopping = gate.stop().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve)); // a stop that did not wait would have settled
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect((await result).status).toBe("delivered");
    adapter.failNext(1, "retryable");
    expect((await gate.deliver(request({ idempotencyKey: "later" }))).status).toBe("queued");
    clock.advance(60_000);
    await gate.idle();
    expect(adapter.sent).toHaveLength(1);
    expect(clock.nextTimerAt()).toBeUndefined();
  });

  it("delivers nothing for blank text", async () => {
    const { gate, adapter } = await setupGate();
    expect(await gate.deliver(request({ text: " \n " }))).toEqual({ status: "delivered", messageIds: [] });
    expect(adapter.calls).toEqual([]);
  });

  describe("a crash during a send", () => {
    /** Starts a send that the platform holds, as the process dies with it in flight. */
    async function crashDuringSend() {
      const first = await setupGate({ disk: true });
      const release = first.adapter.hold();
      void first.gate.deliver(request({ text: "in flight" }));
      await expect.poll(async () => (await readStateFile(first.file))["reply:1"]?.sending).toMatchObject({ index: 0 });
      return { file: first.file, release };
    }

    it("records on disk that a chunk's send started before the platform is called, and clears it once recorded", async () => {
      const { gate, file, adapter } = await setupGate({ disk: true });
      await gate.deliver(request({ text: "hello" }));
      expect(adapter.calls).toHaveLength(1);
      const row = (await readStateFile(file))["reply:1"];
      expect(row).toMatchObject({ status: "delivered", sent: 1 });
      expect(row).not.toHaveProperty("sending");
    });

    it("resends a chunk whose send was interrupted once, and warns that it may arrive twice on a platform that cannot deduplicate", async () => {
      const { file, release } = await crashDuringSend();
      const restarted = await setupGate({ file });
      await expect.poll(() => restarted.adapter.texts()).toEqual(["in flight"]);
      await restarted.gate.idle();
      expect(restarted.adapter.calls).toHaveLength(1);
      expect(restarted.outbox.get("reply:1")).toMatchObject({ status: "delivered", sent: 1 });
      expect(restarted.logger.records).toContainEqual(
        expect.objectContaining({
          level: "warn",
          message: expect.stringContaining("it may arrive twice"),
          fields: expect.objectContaining({ id: "reply:1", chunk: 0 }),
        }),
      );
      release();
    });

    it("resends with the same idempotency key to a platform that deduplicates, without a warning", async () => {
      const { file, release } = await crashDuringSend();
      const adapter = createFakeChannelAdapter({ id: "telegram", deduplicatesSends: true });
      const restarted = await setupGate({ file, adapter });
      await expect.poll(() => adapter.calls.map((c) => c.message.idempotencyKey)).toEqual(["reply:1#0"]);
      expect(restarted.logger.records.filter((r) => r.level === "warn")).toEqual([]);
      release();
    });

    it("gives every attempt at one chunk the same idempotency key, and each chunk its own", async () => {
      const { gate, adapter, clock } = await setupGate({
        adapter: createFakeChannelAdapter({ id: "telegram", maxTextLength: 10 }),
      });
      adapter.failNext(1, "retryable", { after: 1 });
      await gate.deliver(request({ text: "aaaa bbbb cccc dddd" }));
      await expect
        .poll(async () => {
          clock.advance(60_000);
          await gate.idle();
          return adapter.texts().length;
        })
        .toBe(2);
      expect(adapter.calls.map((c) => c.message.idempotencyKey)).toEqual(["reply:1#0", "reply:1#1", "reply:1#1"]);
    });
  });
});
