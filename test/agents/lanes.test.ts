import { describe, expect, it } from "vitest";
import { LaneClearedError, createLanes } from "../../src/agents/lanes.js";

/** A promise the test settles by hand. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every pending promise callback run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("createLanes", () => {
  it("runs the tasks of one key in arrival order", async () => {
    const lanes = createLanes();
    const order: number[] = [];
    const gates = [deferred(), deferred(), deferred()];
    const runs = gates.map((gate, i) =>
      lanes.run("a", async () => {
        await gate.promise;
        order.push(i);
        return i;
      }),
    );
    // Released out of order: the lane still finishes them first to last.
    gates[2]!.resolve();
    gates[1]!.resolve();
    gates[0]!.resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2]);
    expect(order).toEqual([0, 1, 2]);
  });

  it("runs one task of a key at a time", async () => {
    const lanes = createLanes();
    let running = 0;
    let most = 0;
    const task = async () => {
      running++;
      most = Math.max(most, running);
      await settle();
      running--;
    };
    await Promise.all(Array.from({ length: 5 }, () => lanes.run("a", task)));
    expect(most).toBe(1);
  });

  it("runs different keys in parallel", async () => {
    const lanes = createLanes();
    const blockA = deferred();
    const a = lanes.run("a", async () => {
      await blockA.promise;
      return "a";
    });
    // "b" finishes while "a" still waits.
    expect(await lanes.run("b", async () => "b")).toBe("b");
    expect(lanes.busy("a")).toBe(true);
    blockA.resolve();
    expect(await a).toBe("a");
  });

  it("keeps running the lane after a task fails", async () => {
    const lanes = createLanes();
    const failed = lanes.run("a", async () => {
      throw new Error("boom");
    });
    const next = lanes.run("a", async () => "after");
    await expect(failed).rejects.toThrow("boom");
    expect(await next).toBe("after");
  });

  it("rejects queued tasks with LaneClearedError on clear, and lets the running one finish", async () => {
    const lanes = createLanes();
    const block = deferred();
    let queuedRan = false;
    const running = lanes.run("a", async () => {
      await block.promise;
      return "finished";
    });
    const markRan = async () => {
      queuedRan = true;
    };
    const queued1 = lanes.run("a", markRan);
    const queued2 = lanes.run("a", markRan);
    expect(lanes.clear("a")).toBe(2);
    await expect(queued1).rejects.toBeInstanceOf(LaneClearedError);
    await expect(queued2).rejects.toMatchObject({ name: "LaneClearedError", key: "a" });
    block.resolve();
    expect(await running).toBe("finished");
    expect(queuedRan).toBe(false);
  });

  it("clears nothing on a key without work", () => {
    expect(createLanes().clear("nobody")).toBe(0);
  });

  it("reports queued, busy and stats while work runs, and nothing once it is done", async () => {
    const lanes = createLanes();
    const block = deferred();
    const first = lanes.run("a", () => block.promise);
    const second = lanes.run("a", async () => undefined);
    const other = lanes.run("b", () => block.promise);
    expect(lanes.busy("a")).toBe(true);
    expect(lanes.queued("a")).toBe(1);
    expect(lanes.queued("b")).toBe(0);
    expect(lanes.stats()).toEqual([
      { key: "a", running: true, queued: 1 },
      { key: "b", running: true, queued: 0 },
    ]);
    block.resolve();
    await Promise.all([first, second, other]);
    expect(lanes.busy("a")).toBe(false);
    expect(lanes.queued("a")).toBe(0);
    expect(lanes.stats()).toEqual([]);
  });

  it("settles idle only after work queued while it waited", async () => {
    const lanes = createLanes();
    const done: string[] = [];
    const block = deferred();
    void lanes.run("a", async () => {
      await block.promise;
      // Queued on another key while idle() is already waiting.
      void lanes.run("b", async () => {
        await settle();
        done.push("b");
      });
      done.push("a");
    });
    const idle = lanes.idle().then(() => done.push("idle"));
    block.resolve();
    await idle;
    expect(done).toEqual(["a", "b", "idle"]);
  });

  it("settles idle at once when there is no work", async () => {
    await expect(createLanes().idle()).resolves.toBeUndefined();
  });
});
