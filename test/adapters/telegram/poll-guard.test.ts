// A paused ex-owner that continues must not poll beside the gateway that took its bot over
// (docs/scale-out.md): the poller asks the gateway's send guard before every getUpdates.
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../../src/logger.js";
import { dm, pollTexts, useTelegramHarness } from "./telegram-harness.js";

const harness = useTelegramHarness();

/** Polls the fake with `mayPoll` as the gateway's guard; resolves when polling stops on its own. */
const poll = (apiRoot: string, mayPoll: () => Promise<boolean>, handled: string[], signal: AbortSignal) =>
  pollTexts(apiRoot, { backoff: { minMs: 1, maxMs: 1 }, logger: createMemoryLogger(), signal, handled, mayPoll });

describe("polling asks whether the gateway still holds the bot", () => {
  it("sends no getUpdates once the guard says the bot was taken over, and stops polling", async () => {
    const h = await harness({ start: false });
    const handled: string[] = [];
    let asked = 0;
    h.fake.push(dm("first", 1));
    // Held for the first poll; taken over (a paused ex-owner's heartbeat failed) before the second.
    await poll(h.fake.apiRoot, async () => ++asked === 1, handled, new AbortController().signal);
    // The loop returned by itself (its signal never aborted): polling stopped at the guard.
    expect(asked).toBe(2);
    expect(handled).toEqual(["first"]);
    expect(h.fake.callsTo("getUpdates")).toHaveLength(1);
  });

  it("waits while the guard cannot say (the database is away) and polls again once it can", async () => {
    const h = await harness({ start: false });
    let answers = 0;
    const handled: string[] = [];
    const controller = new AbortController();
    const pollsWhileUnsure: number[] = [];
    const mayPoll = async () => {
      answers++;
      if (answers > 3) return true;
      pollsWhileUnsure.push(h.fake.callsTo("getUpdates").length);
      throw new Error("the database does not answer");
    };
    h.fake.push(dm("after the outage", 1));
    const polling = poll(h.fake.apiRoot, mayPoll, handled, controller.signal);
    await expect.poll(() => handled).toEqual(["after the outage"]);
    // No poll went out while the guard could not say.
    expect(pollsWhileUnsure).toEqual([0, 0, 0]);
    controller.abort();
    await polling;
  });
});
