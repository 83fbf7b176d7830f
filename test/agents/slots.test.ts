import { describe, expect, it } from "vitest";
import { createSlots } from "../../src/agents/slots.js";

describe("createSlots", () => {
  it("lets `limit` holders in at once and the next waiter in when one releases", async () => {
    const slots = createSlots(2);
    const a = await slots.acquire();
    await slots.acquire();
    let third = false;
    const waiting = slots.acquire().then((release) => {
      third = true;
      return release;
    });
    await Promise.resolve();
    expect([third, slots.held, slots.waiting]).toEqual([false, 2, 1]);
    a();
    await waiting;
    expect([third, slots.held, slots.waiting]).toEqual([true, 2, 0]);
  });

  it("grants slots in arrival order: a newcomer never overtakes a waiter", async () => {
    const slots = createSlots(1);
    const first = await slots.acquire();
    const order: number[] = [];
    const waiters = [1, 2, 3].map((n) =>
      slots.acquire().then((release) => {
        order.push(n);
        release();
      }),
    );
    first();
    // Asked after the release, while the three still wait their turn.
    const late = slots.acquire().then((release) => {
      order.push(4);
      release();
    });
    await Promise.all([...waiters, late]);
    expect(order).toEqual([1, 2, 3, 4]);
    expect(slots.held).toBe(0);
  });

  it("frees one slot however often a holder releases", async () => {
    const slots = createSlots(1);
    const release = await slots.acquire();
    const next = slots.acquire();
    release();
    release();
    await next;
    expect(slots.held).toBe(1);
    let overtook = false;
    void slots.acquire().then(() => (overtook = true));
    await new Promise((resolve) => setImmediate(resolve)); // every promise that could settle has
    expect(overtook).toBe(false);
  });

  it("stops waiting when the signal aborts, with its reason, and passes the slot on to the next", async () => {
    const slots = createSlots(1);
    const release = await slots.acquire();
    const controller = new AbortController();
    const aborted = slots.acquire(controller.signal);
    const after = slots.acquire();
    controller.abort(new Error("stopped"));
    await expect(aborted).rejects.toThrow("stopped");
    expect(slots.waiting).toBe(1);
    release();
    await after;
    expect([slots.held, slots.waiting]).toEqual([1, 0]);
    await expect(slots.acquire(controller.signal)).rejects.toThrow("stopped");
  });

  it("refuses a limit below 1", () => {
    expect(() => createSlots(0)).toThrow(RangeError);
  });
});

describe("createSlots, first in line", () => {
  it("serves a `first` waiter before everyone who waited without it, and `first` waiters in their own order", async () => {
    const slots = createSlots(1);
    const holder = await slots.acquire();
    const order: string[] = [];
    const take = (name: string, first?: boolean) =>
      slots.acquire(undefined, { first }).then((release) => {
        order.push(name);
        release();
      });
    const all = [take("new 1"), take("new 2"), take("back 1", true), take("back 2", true)];
    holder();
    await Promise.all(all);
    expect(order).toEqual(["back 1", "back 2", "new 1", "new 2"]);
  });
});
