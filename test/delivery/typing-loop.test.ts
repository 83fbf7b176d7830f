import { describe, expect, it } from "vitest";
import { startTyping } from "../../src/delivery/typing-loop.js";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";
import { createManualClock } from "../fakes/manual-clock.js";

/** One turn of the event loop: where the first indicator is shown. */
const eventLoopTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("startTyping", () => {
  it("shows the indicator at once, renews it until stopped, and survives a failing indicator", async () => {
    const clock = createManualClock();
    const targets: string[] = [];
    let fail = false;
    const adapter = Object.assign(createFakeChannelAdapter(), {
      typing: async (target: { to?: string }) => {
        targets.push(target.to ?? "");
        if (fail) throw new Error("flaky");
      },
    });
    const stop = startTyping(adapter, { channel: "fake", to: "42" }, 20, clock.timers);
    await eventLoopTurn();
    expect(targets).toHaveLength(1);
    clock.advance(60);
    expect(targets).toHaveLength(4);
    fail = true;
    clock.advance(20);
    await eventLoopTurn();
    expect(targets).toHaveLength(5);
    clock.advance(20);
    expect(targets).toHaveLength(6);
    stop();
    clock.advance(200);
    await eventLoopTurn();
    expect(targets).toHaveLength(6);
    expect(clock.nextTimerAt()).toBeUndefined();
    expect(new Set(targets)).toEqual(new Set(["42"]));
  });

  it("shows nothing for a run stopped before the event loop came around (its reply clears it at once)", async () => {
    const clock = createManualClock();
    const targets: string[] = [];
    const adapter = Object.assign(createFakeChannelAdapter(), {
      typing: async (target: { to?: string }) => void targets.push(target.to ?? ""),
    });
    const stop = startTyping(adapter, { channel: "fake", to: "42" }, 20, clock.timers);
    await Promise.resolve(); // a model answering from memory settles in microtasks
    stop();
    await eventLoopTurn();
    clock.advance(200);
    expect(targets).toEqual([]);
  });

  it("asks the send guard before every indicator: a paused ex-owner past its lease shows none", async () => {
    const clock = createManualClock();
    const targets: string[] = [];
    let owner = true;
    const asked: boolean[] = [];
    const adapter = Object.assign(createFakeChannelAdapter(), {
      typing: async (target: { to?: string }) => void targets.push(target.to ?? ""),
    });
    const mayAct = async () => {
      asked.push(owner);
      return owner;
    };
    const stop = startTyping(adapter, { channel: "fake", to: "42" }, 20, clock.timers, mayAct);
    await eventLoopTurn();
    expect(targets).toEqual(["42"]);
    owner = false; // the lease was taken over while this gateway was paused
    clock.advance(20);
    await eventLoopTurn();
    clock.advance(20);
    await eventLoopTurn();
    stop();
    expect(asked).toEqual([true, false, false]);
    expect(targets).toEqual(["42"]);
  });

  it("shows no indicator when the send guard cannot confirm the lease (database down)", async () => {
    const targets: string[] = [];
    const adapter = Object.assign(createFakeChannelAdapter(), {
      typing: async (target: { to?: string }) => void targets.push(target.to ?? ""),
    });
    const unconfirmed = () => Promise.reject(new Error("lease_unconfirmed"));
    const stop = startTyping(adapter, { channel: "fake", to: "42" }, 20, createManualClock().timers, unconfirmed);
    await eventLoopTurn();
    stop();
    expect(targets).toEqual([]);
  });

  it("does nothing for an adapter without typing", () => {
    expect(() => startTyping(createFakeChannelAdapter(), { channel: "fake", to: "1" })()).not.toThrow();
  });
});
