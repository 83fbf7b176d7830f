import { describe, expect, it } from "vitest";
import { startTyping } from "../../src/delivery/typing-loop.js";
import { createFakeChannelAdapter } from "../fakes/fake-channel-adapter.js";

describe("startTyping", () => {
  it("shows the indicator at once, renews it until stopped, and survives a failing indicator", async () => {
    const targets: string[] = [];
    let fail = false;
    const adapter = Object.assign(createFakeChannelAdapter(), {
      typing: async (target: { to?: string }) => {
        targets.push(target.to ?? "");
        if (fail) throw new Error("flaky");
      },
    });
    const stop = startTyping(adapter, { channel: "fake", to: "42" }, 20);
    await new Promise((resolve) => setTimeout(resolve, 70));
    fail = true;
    await new Promise((resolve) => setTimeout(resolve, 30));
    stop();
    const seen = targets.length;
    expect(seen).toBeGreaterThanOrEqual(2);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(targets).toHaveLength(seen);
    expect(new Set(targets)).toEqual(new Set(["42"]));
  });

  it("shows nothing for a run stopped before the event loop came around (its reply clears it at once)", async () => {
    const targets: string[] = [];
    const adapter = Object.assign(createFakeChannelAdapter(), {
      typing: async (target: { to?: string }) => void targets.push(target.to ?? ""),
    });
    const stop = startTyping(adapter, { channel: "fake", to: "42" }, 20);
    await Promise.resolve(); // a model answering from memory settles in microtasks
    stop();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(targets).toEqual([]);
  });

  it("does nothing for an adapter without typing", () => {
    expect(() => startTyping(createFakeChannelAdapter(), { channel: "fake", to: "1" })()).not.toThrow();
  });
});
