import { describe, expect, it } from "vitest";
import { createKeyedMutex } from "../../src/sessions/keyed-mutex.js";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("createKeyedMutex", () => {
  it("runs tasks on one key one at a time, in call order", async () => {
    const mutex = createKeyedMutex();
    const events: string[] = [];
    const task = (name: string) => async () => {
      events.push(`start ${name}`);
      await tick();
      events.push(`end ${name}`);
      return name;
    };
    const results = await Promise.all([
      mutex.run("a", task("1")),
      mutex.run("a", task("2")),
      mutex.run("a", task("3")),
    ]);
    expect(results).toEqual(["1", "2", "3"]);
    expect(events).toEqual(["start 1", "end 1", "start 2", "end 2", "start 3", "end 3"]);
  });

  it("runs tasks on different keys concurrently", async () => {
    const mutex = createKeyedMutex();
    const events: string[] = [];
    const task = (name: string) => async () => {
      events.push(`start ${name}`);
      await tick();
      events.push(`end ${name}`);
    };
    await Promise.all([mutex.run("a", task("a")), mutex.run("b", task("b"))]);
    expect(events.slice(0, 2)).toEqual(["start a", "start b"]);
  });

  it("keeps running later tasks after one rejects", async () => {
    const mutex = createKeyedMutex();
    const failed = mutex.run("a", () => Promise.reject(new Error("boom")));
    const next = mutex.run("a", () => "ok");
    await expect(failed).rejects.toThrow("boom");
    await expect(next).resolves.toBe("ok");
  });

  it("forgets a key once its tasks have settled", async () => {
    const mutex = createKeyedMutex();
    const running = mutex.run("a", tick);
    expect(mutex.size).toBe(1);
    await running;
    await tick();
    expect(mutex.size).toBe(0);
  });
});
